"""The demo mailbox: a generated Google Takeout-style mbox that is the offline demo and the test backbone.

Regenerate with `python -m server.demo.generator.make_mailbox` (deterministic; a test checks the committed file
matches).
README.md in this folder describes what it contains. The constants below are facts tests may rely on;
`server/tests/test_demo_mailbox.py` checks every one of them against the file, so they cannot drift.

Counts are per message (Gmail's API searches messages, not threads). "Visible" means what a search without
`in:spam`, `in:trash` or `in:anywhere` returns: everything except Spam and Trash.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

DEMO_MAILBOX: Path = Path(__file__).with_name("mailbox.mbox")
DEMO_OWNER: str = "alex.chen@example.com"
DEMO_OWNER_NAME: str = "Alex Chen"

# Every date counts back from the newest message, which is exactly NEWEST_DATE; all dates lie before
# BASE_DATE. The emulator's --rebase-dates shifts every date so the newest message becomes one hour old.
NEWEST_DATE: datetime = datetime(2026, 11, 20, 1, 45, tzinfo=timezone.utc)
BASE_DATE: datetime = datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc)

MESSAGE_COUNT = 96
VISIBLE_COUNT = 89  # not Spam, not Trash
# X-Gmail-Labels names (Takeout spelling) -> number of messages carrying them. Every message has either
# "Opened" (read) or "Unread".
LABEL_COUNTS: dict[str, int] = {
    "Category Forums": 3,
    "Category Promotions": 4,
    "Category Social": 2,
    "Category Updates": 18,
    "Family": 5,
    "Family/Kids": 3,
    "Important": 10,
    "Inbox": 68,
    "Opened": 78,
    "Project Phoenix": 11,
    "Receipts": 6,
    "Sent": 10,
    "Spam": 4,
    "Starred": 10,
    "Trash": 3,
    "Travel": 14,
    "Unread": 18,
    "Work": 29,
}
INBOX_AND_STARRED_COUNT = 8  # label_ids=["INBOX", "STARRED"]; two more starred messages are not in the inbox
# Visible messages younger than N days, measured from the newest message. No message lies within two hours
# of these edges, so `newer_than:Nd` gives these counts after --rebase-dates too.
RECENT_COUNTS: dict[int, int] = {1: 5, 3: 11, 7: 21, 30: 51}

# The spec's manual checks: `subject:test meeting` and `from:example@gmail.com`.
KNOWN_SENDER = "example@gmail.com"  # Sam Rivera, a friend; a spam spoofs this address, a trashed mail is his
KNOWN_SENDER_NAME = "Sam Rivera"
KNOWN_SENDER_COUNT = 6  # visible messages from KNOWN_SENDER
KNOWN_SENDER_COUNT_ANYWHERE = 8  # including one in Spam and one in Trash
KNOWN_SUBJECT_WORDS = "test meeting"
KNOWN_SUBJECT_COUNT = 5  # visible messages whose subject contains KNOWN_SUBJECT_WORDS (case-insensitive)
KNOWN_SUBJECT_COUNT_ANYWHERE = 7  # including one in Spam and one in Trash


class Notable(NamedTuple):
    subject: str  # decoded, unfolded Subject header
    message_id: str  # the Message-ID header


# Messages worth pointing a test at, by their key in content.py. README.md says what each one exercises.
NOTABLE: dict[str, Notable] = {
    "sam-test-meeting-1": Notable(
        "Test meeting on Thursday", "<CA9J+PftmZPlGLtMNdohk2YcAIhoD866sUbGFNrh8W5@mail.gmail.com>"
    ),
    "sam-q3-notes": Notable("Q3 test meeting notes", "<CAJK+2Xn1jWlqkoT34cssiX1Mi4bvnnzMIz5XMuGL8M@mail.gmail.com>"),
    "sam-recap": Notable(
        "Test meeting recap and next steps", "<CAI2+O3A3lNcpnunN7TD4jMGK1mKdiPF1Db0xv4FCDv@mail.gmail.com>"
    ),
    "sam-hike": Notable(
        "Photos from Saturday's hike 🏔️📸", "<CACT+t9ZFAogsnMfL5QddnRMRV7WM8nX0NXVAgeU7Rk@mail.gmail.com>"
    ),
    "phx-kickoff-1": Notable("Project Phoenix kickoff: goals and timeline", "<bd5d03fa2f8a8064af574c2d@example.com>"),
    "phx-vendor-shortlist": Notable(
        "Phoenix vendor shortlist", "<CA3P+P06YmMs98YI+iQszLyePyP88dZ7CTPhjNRJGfj@mail.gmail.com>"
    ),
    "phx-architecture": Notable("Phoenix architecture diagram", "<223d7f49973230681c4585d5@example.com>"),
    "phx-design-doc": Notable("Phoenix design doc v2 (PDF attached)", "<bc4941a6210b8c7cba81c000@example.com>"),
    "phx-fwd-feedback": Notable("Fwd: Feedback on the Phoenix beta checkout", "<2e889c3884f26cb469ac4127@example.com>"),
    "phx-status": Notable("Phoenix weekly status — week 47", "<89434f6897541b97d1243ef5@example.com>"),
    "phx-sprint-invite": Notable(
        "Invitation: Phoenix sprint review @ Tue Nov 24, 2026 9am - 10am (PST) (alex.chen@example.com)",
        "<855acc320848b95e8a735e70@example.com>",
    ),
    "phx-postmortem": Notable(
        "Postmortem: checkout outage on Nov 2 (full timeline)", "<f60dbd4fc23aa745ffb2d20f@example.com>"
    ),
    "phx-signed-keys": Notable("Phoenix release signing keys rotated", "<90eeeab9d8122b4868453376@example.com>"),
    "nora-encrypted": Notable("Contract draft (encrypted)", "<fbb433a114bccabe628222bf@example.com>"),
    "wang-order-1": Notable("关于第三季度订单的确认", "<1ddfeef0c6a6cc988ad41836@cn.example.com>"),
    "wang-order-3": Notable("Re: 关于第三季度订单的确认", "<4d908a4c9ef53fb32be8b154@cn.example.com>"),
    "likun-minutes": Notable("会议纪要：产品评审（周三）", "<166f8b9362f5536b355766ff@cn.example.com>"),
    "zhao-dinner": Notable("年终聚餐：𠮷野家还是海底捞？", "<6f3f9feb6246edc947dbbec6@cn.example.com>"),
    "zhou-housewarming": Notable("乔迁之喜，周六来玩！", "<45c36abad5fe2baaa2aaf07c@example.net>"),
    "mom-dinner": Notable("周末回家吃饭吗？", "<1ba941abaf8dc492478bde67@example.net>"),
    "youxuan-promo": Notable("双十二预热：全场满300减50，限时三天", "<eb329617107bb774ea2fa1eb@youxuan.example.com>"),
    "big5-office-move": Notable("臺北辦公室搬遷通知", "<0479881edae3f99f7097b938@tw.example.com>"),
    "tanaka-meeting-1": Notable("来週の打ち合わせについて", "<fe643d440ab6ba955c135121@jp.example.net>"),
    "sakura-order": Notable(
        "【ご注文確認】ご注文ありがとうございます（注文番号 SB-20260930-0042）",
        "<70d5d08eee871f52c366f479@sakura-books.example.com>",
    ),
    "kim-seoul-trip": Notable("다음 주 서울 출장 일정 안내", "<4891c31b0617d73fdc662635@kr.example.org>"),
    "francois-budget": Notable("Question about the “Phoenix” budget", "<73da9c00083003d8a0dff976@fr.example.com>"),
    "cafe-menu": Notable(
        "Your Friday offsite menu at Café Lumière", "<1b155192e86b4d302e96ae30@cafe-lumiere.example.com>"
    ),
    "pottery-class": Notable("Pottery class sign-up confirmed", "<49ae89be98dec03b4ec09bbb@clayworks.example.org>"),
    "byte-145": Notable(
        "The Weekly Byte #145: Rust in the kernel, SQLite tricks", "<c79327c2c7292843cb1acda7@weeklybyte.example.com>"
    ),
    "northwind-jackets": Notable(
        "40% off winter jackets — this weekend only", "<1da3921125ab81f56141bc68@northwind.example.com>"
    ),
    "py-demo-1": Notable(
        "[py-demo] Proposal: deprecate the legacy config loader", "<3ef2a2efe1d0a3bdfc894334@example.org>"
    ),
    "scan-lease": Notable("Scan from MFP-4F 2026-11-14", "<b7d7d51522d4c2f19c4a1a19@office.example.com>"),
    "voicemail": Notable("New voicemail from (555) 010-7788", "<a14121c39b9041ff9dd40a3b@phone.example.com>"),
    "cron-backup": Notable(
        "Cron <backup@nas> /usr/local/bin/nightly-backup.sh", "<f73555d86fa0bcb29ec57648@nas.home.example.net>"
    ),
    "passport-reminder": Notable(
        "Passport renewal appointment Dec 3, 10:15 - bring photo + old passport",
        "<CATE+tjCcqiBxS2s7NECiYrpaizslv7zBvceJaxqYQv@mail.gmail.com>",
    ),
    "offsite-1": Notable("Lisbon offsite: venue, agenda and budget", "<30ebb3bccc05d1a0d56e55f9@example.org>"),
    "offsite-4": Notable("Re: Lisbon offsite: venue, agenda and budget", "<e56145bb2e5927097702776e@example.org>"),
    "offsite-6": Notable("Re: Lisbon offsite: venue, agenda and budget", "<ec71d0d4bc1d7ebc9b4282ef@example.com>"),
    "offsite-7": Notable("Re: Lisbon offsite: venue, agenda and budget", "<9ac404cdcee3b7df33c6dcd1@example.org>"),
    "offsite-8": Notable("Re: Lisbon offsite: venue, agenda and budget", "<278050b57d7057b470d6f620@fr.example.com>"),
    "spam-helpdesk": Notable(
        "URGENT: test meeting invitation - verify your mailbox now",
        "<6fa1a4058f48ac368f5eca79@secure-login.example.net>",
    ),
    "spam-spoofed-sender": Notable(
        "You have (1) pending meeting reward", "<CAM0+5F7Vq5+PCVMTjyou8lLvmB56qrdjeeFQdmcWQe@mail.gmail.com>"
    ),
    "trash-cancelled-test-meeting": Notable(
        "Cancelled: test meeting on Wednesday (moved to Thursday)",
        "<CA0X+D0G9CO3EYfLRX2Pk14ob4BquIJxumOnKcprg4p@mail.gmail.com>",
    ),
    "trash-room-booking": Notable(
        "Meeting room booking confirmed: Orion (4F), Tue 10:00", "<8286c85158ec36606e292583@accounts.example.com>"
    ),
    # The trust section: mail written for an assistant (hidden instructions, a look-alike sender).
    "trust-invoice-hidden": Notable(
        "Invoice INV-4471: Phoenix hosting, November", "<95f95f08bc94caa16fac7de2@stratus-cloud.example>"
    ),
    "trust-bank-lookalike": Notable(
        "Unusual sign-in to your Harbor Bank account", "<03e7a9f63414e4cb3dd33588@harb0rbank.example>"
    ),
}
# The 60 KB plain-text body, for truncation and offset tests.
LONG_MESSAGE_KEY = "phx-postmortem"
# The Lisbon offsite thread (offsite.py): eight messages in English and French quoting each other three ways
# (Gmail in English and in French, Outlook's header block), with an XLSX, two DOCX, a PDF and a PNG attached.
OFFSITE_THREAD_LENGTH = 8
OFFSITE_ATTACHMENTS: dict[str, tuple[str, str]] = {  # file name -> (message key, a phrase of its text)
    "offsite-budget.xlsx": ("offsite-1", "Hotel Lisboa Rio, standard room | 145 | 18 | 2610"),
    "offsite-agenda-draft-v1.docx": ("offsite-4", "Budget review for 2027 (François)"),
    "offsite-agenda-v2.docx": ("offsite-7", "On-call rotation and incident reviews (Ana)"),
    "Casa-do-Largo-quote-2026-118.pdf": ("offsite-7", "Deposit of 30% due by 25 November 2026."),
    "casa-do-largo-main-room.png": ("offsite-7", "80×48 pixels"),
}
