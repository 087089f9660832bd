"""The demo mailbox's cast and shapes: who writes (`Person`), what a message is (`Mail`), and the MIME shapes the
message tables share (`content.py` for most of the mailbox, `offsite.py` for the Lisbon thread).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from email.message import Message

from server.demo import DEMO_OWNER

from .builders import container, text
from .templates import gmail_html


@dataclass(frozen=True)
class Person:
    name: str
    email: str
    tz: str  # "us-pacific", "us-eastern", "europe" (DST-aware) or a fixed "+0800"


@dataclass(frozen=True)
class Mail:
    key: str  # stable name: seeds the Message-ID and is how tests and docs refer to a message
    ago: timedelta  # age relative to the newest message in the mailbox
    sender: Person
    to: tuple[Person, ...]
    labels: str  # comma-separated Takeout labels; "Opened" is added unless "Unread" is present
    subject: str = ""  # empty for a reply: "Re: " + the parent's subject
    text: str = ""  # the body text; a reply gets the quoted parent appended
    body: Callable[[str], Message] | None = None  # MIME shape; default: one text/plain part
    reply_to: str | None = None  # key of the message this one answers
    cc: tuple[Person, ...] = ()
    bcc: tuple[Person, ...] = ()
    charset: str = "UTF-8"  # charset of the default body and of encoded-word headers
    enc: str = "B"  # encoded-word encoding for Subject and display names: "B" or "Q"
    cte: str = ""  # transfer encoding of the default body; empty picks one like real mailers do
    codec: str = ""  # codec that really encodes the body and headers when the label lies (see CHARSET_CASES)
    headers: tuple[tuple[str, str], ...] = ()  # extra headers (List-Id, X-Mailer, ...)
    mime: bool = True  # False: an old-style message with no MIME headers at all
    quote: bool = True  # replies quote their parent
    quote_style: str = "gmail"  # how: "gmail" (On ... wrote:), "gmail-fr" (Le ... a écrit :), "outlook" (From:/Sent:)


def ago(days: float = 0, hours: float = 0, minutes: float = 0) -> timedelta:
    return timedelta(days=days, hours=hours, minutes=minutes)


def t(block: str) -> str:
    """A body from an indented triple-quoted block."""
    return textwrap.dedent(block).strip("\n") + "\n"


# --- people ------------------------------------------------------------------------------------------------

ALEX = Person("Alex Chen", DEMO_OWNER, "us-pacific")
SAM = Person("Sam Rivera", "example@gmail.com", "us-pacific")
PRIYA = Person("Priya Natarajan", "priya.natarajan@example.com", "us-pacific")
MARCUS = Person("Marcus Webb", "marcus.webb@example.com", "us-eastern")
DANA = Person("Dana Whitfield", "dana.whitfield@example.com", "us-pacific")
TOM = Person("Tom Okafor", "tom.okafor@example.com", "us-pacific")
RUTH = Person("Ruth Alvarez", "ruth.alvarez@example.com", "us-pacific")
NORA = Person("Nora Patel", "nora.patel@example.com", "us-pacific")
RELEASE = Person("Phoenix Release Team", "release@example.com", "+0000")
JORDAN = Person("Jordan Lee", "jordan.lee@example.org", "us-pacific")
MEI = Person("Mei Chen", "mei.chen@example.net", "us-pacific")
MOM = Person("妈妈", "chen.mama@example.net", "+0800")
WANG = Person("王芳", "wang.fang@cn.example.com", "+0800")
LI_KUN = Person("李堃", "li.kun@cn.example.com", "+0800")
ZHAO = Person("赵磊", "zhao.lei@cn.example.com", "+0800")
ZHOU = Person("周喆", "zhou.zhe@example.net", "+0800")
CHEN_TW = Person("陳志明", "cm.chen@tw.example.com", "+0800")
TANAKA = Person("田中 健", "ken.tanaka@jp.example.net", "+0900")
SAKURA = Person("さくら書店", "order@sakura-books.example.com", "+0900")
KIM = Person("김민준", "minjun.kim@kr.example.org", "+0900")
FRANCOIS = Person("François Dubois", "francois.dubois@fr.example.com", "europe")
CAFE = Person("Café Lumière Events", "events@cafe-lumiere.example.com", "us-pacific")
OLIVIA = Person("Olivia Grant", "olivia@clayworks.example.org", "us-pacific")
HELEN = Person("Helen Park", "helen.park@customer.example.org", "us-eastern")
ANA = Person("Ana Souza", "ana.souza@example.org", "+0000")
KENJI = Person("Kenji Mori", "kenji.mori@example.net", "+0900")
PY_DEMO = Person("", "py-demo@lists.example.org", "+0000")
WEEKLY_BYTE = Person("The Weekly Byte", "newsletter@weeklybyte.example.com", "+0000")
NORTHWIND = Person("Northwind Outfitters", "deals@northwind.example.com", "us-pacific")
CODEHUB_DANA = Person("Dana Whitfield", "notifications@codehub.example.com", "+0000")
CODEHUB_MARCUS = Person("Marcus Webb", "notifications@codehub.example.com", "+0000")
CODEHUB_BOT = Person("release-bot", "notifications@codehub.example.com", "+0000")
PHOENIX_REPO = Person("acme/phoenix", "phoenix@noreply.codehub.example.com", "+0000")
ACCOUNTS = Person("Example Accounts", "no-reply@accounts.example.com", "+0000")
CONNECTLY = Person("Connectly", "notifications@connectly.example.com", "+0000")
SKYHIGH = Person("SkyHigh Airlines", "reservations@skyhigh.example.com", "+0000")
HOTEL = Person("Hotel Sakura Shinjuku", "stay@hotel-sakura.example.com", "+0900")
PASSPORTS = Person("Passport Services", "noreply@passports.example.org", "us-eastern")
POWER = Person("City Power & Light", "billing@citypower.example.com", "us-pacific")
BANK = Person("Harbor Bank", "statements@harborbank.example.com", "+0000")
COFFEE = Person("Bean & Leaf Coffee", "receipts@beanleaf.example.com", "us-pacific")
RIVERBEND = Person("Riverbend Books", "orders@riverbend.example.com", "us-pacific")
DENTIST = Person("Bright Smile Dental", "reminders@brightsmile.example.com", "us-pacific")
LANDLORD = Person("Greenview Property Management", "office@greenview.example.com", "us-pacific")
SCHOOL = Person("Maple Street Elementary", "office@maple-elementary.example.org", "us-pacific")
SCANNER = Person("MFP-4F Scanner", "scanner@office.example.com", "us-pacific")
CRON = Person("Cron Daemon", "root@nas.home.example.net", "us-pacific")
VOICE = Person("Voice", "voice-noreply@phone.example.com", "us-pacific")
YOUXUAN = Person("优选商城", "news@youxuan.example.com", "+0800")
SPAM_HELPDESK = Person("IT Helpdesk", "helpdesk@secure-login.example.net", "+0000")
SPAM_SPOOF = Person("Account Team", "example@gmail.com", "+0000")
SPAM_PRIZE = Person("Rewards Center", "winner@prize-claims.example.net", "+0000")
SPAM_FAPIAO = Person("代开发票", "service@fapiao.example.net", "+0800")

# --- MIME shapes -------------------------------------------------------------------------------------------


def auto_cte(body: str, charset: str = "UTF-8") -> str:
    return "7bit" if body.isascii() else "quoted-printable" if charset.lower() == "utf-8" else "base64"


def alt_gmail(body: str) -> Message:
    """multipart/alternative as Gmail sends it: the text and its div-per-line HTML."""
    return container("alternative", text(body, cte=auto_cte(body)), text(gmail_html(body), "html"))


def alt(body: str, html_body: str) -> Message:
    return container("alternative", text(body, cte=auto_cte(body)), text(html_body, "html"))


def with_files(inner: Callable[[str], Message], *files: Message) -> Callable[[str], Message]:
    """multipart/mixed: the message body (shaped by `inner`) followed by attachments."""
    return lambda body: container("mixed", inner(body), *files)


def plain(body: str) -> Message:
    return text(body, cte=auto_cte(body))
