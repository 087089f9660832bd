"""Test mailboxes composed with the stdlib, and the real google-api-python-client stack pointed at an emulator.

The mailbox covers what the emulator must get right: a reply thread by References, a Takeout mbox with
X-GM-THRID and X-Gmail-Labels, GBK and ISO-2022-JP bodies, an HTML-only newsletter, an attachment, spam and
trash, RFC 2047 headers, and enough filler for several pages.

Pointing the server at an emulator is written once, here: `emulator_env` for a subprocess environment (or
`load_settings(env=...)`), `emulator_settings` for an in-process `Settings`. The emulators themselves come from
the fixtures in conftest.py (`emulator`, `gmail_emulator`, `make_emulator`, `demo_emulator`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
import urllib.request
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Protocol

import httplib2
from google.oauth2.credentials import Credentials
from google_auth_httplib2 import AuthorizedHttp
from googleapiclient.discovery import build

from server.emulator import Emulator
from server.runtime.config import Settings, load_settings

OWNER = "me@example.com"
FILLER_COUNT = 25
PDF_BYTES = b"%PDF-1.4\n" + bytes(range(256)) * 4 + b"\n%%EOF\n"
CHINESE_TEXT = "你好，世界。这是一封中文邮件，用来测试字符集。"
JAPANESE_TEXT = "こんにちは世界。日本語のメールです。"


def _eml(
    *,
    subject: str,
    sender: str,
    to: str = OWNER,
    date: str,
    body: str = "",
    labels: str | None = None,
    message_id: str | None = None,
    extra: dict[str, str] | None = None,
) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = date
    message["Message-ID"] = message_id or f"<{hashlib.sha1((subject + date).encode()).hexdigest()[:12]}@example.com>"
    message["Delivered-To"] = OWNER
    if labels is not None:
        message["X-Gmail-Labels"] = labels
    for name, value in (extra or {}).items():
        message[name] = value
    if body:
        message.set_content(body)
    return message


def _raw_text_message(subject_b64: str, charset: str, body: bytes, cte: str, date: str, labels: str) -> bytes:
    encoded = base64.b64encode(body).decode() if cte == "base64" else body.decode("ascii")
    lines = [
        "From: =?utf-8?b?" + base64.b64encode("王小明".encode()).decode() + "?= <wang@example.cn>",
        f"To: {OWNER}",
        f"Subject: =?{charset}?b?{subject_b64}?=",
        f"Date: {date}",
        f"Message-ID: <{charset}-1@example.cn>",
        f"X-Gmail-Labels: {labels}",
        "MIME-Version: 1.0",
        f'Content-Type: text/plain; charset="{charset}"',
        f"Content-Transfer-Encoding: {cte}",
        "",
        encoded,
        "",
    ]
    return "\r\n".join(lines).encode("ascii")


def build_mailbox(root: Path) -> Path:
    """Writes the test mailbox under `root` (a directory of .eml files plus one Takeout-style .mbox)."""
    root.mkdir(parents=True, exist_ok=True)
    messages: dict[str, bytes] = {}

    report = _eml(
        subject="Quarterly report",
        sender="Alice Example <alice@example.com>",
        date="Fri, 01 Mar 2024 09:00:00 +0000",
        body="Hi,\n\nThe quarterly report is attached below. Numbers look good.\n\nAlice\n",
        labels="Inbox,Unread,Important,Work",
        message_id="<report-1@example.com>",
    )
    messages["report.eml"] = report.as_bytes()
    reply = _eml(
        subject="Re: Quarterly report",
        sender=f"Me <{OWNER}>",
        to="Alice Example <alice@example.com>",
        date="Sat, 02 Mar 2024 10:30:00 +0000",
        body="Thanks Alice, looks great.\n",
        labels="Sent,Opened",
        message_id="<report-2@example.com>",
        extra={"In-Reply-To": "<report-1@example.com>", "References": "<report-1@example.com>"},
    )
    messages["reply.eml"] = reply.as_bytes()

    newsletter = _eml(
        subject="=?utf-8?q?Caf=C3=A9_weekly?=",
        sender="Café News <news@cafe.example>",
        date="Mon, 04 Mar 2024 08:00:00 +0100",
        labels="Inbox,Category Promotions",
        message_id="<cafe-1@cafe.example>",
    )
    newsletter.set_content('Bob\'s "special" <deal> & more: 2 coffees for 1.\n')
    newsletter.add_alternative("<html><body><p>Bob's <b>special</b> deal</p></body></html>", subtype="html")
    messages["newsletter.eml"] = newsletter.as_bytes()

    html_only = _eml(
        subject="Product launch",
        sender="Launch Team <launch@product.example>",
        date="Tue, 05 Mar 2024 12:00:00 +0000",
        labels="Inbox,Category Updates",
        message_id="<launch-1@product.example>",
    )
    html_only.set_content(
        "<html><head><style>p{color:red}</style><script>var x=1;</script></head>"
        "<body><h1>Launch&nbsp;day</h1><p>Meet the new widget.</p></body></html>",
        subtype="html",
    )
    messages["html-only.eml"] = html_only.as_bytes()

    invoice = _eml(
        subject="Invoice 42",
        sender="Billing <billing@vendor.example>",
        date="Wed, 06 Mar 2024 15:00:00 +0000",
        body="Please find the invoice attached.\n",
        labels='Inbox,Starred,"Receipts/2024"',
        message_id="<invoice-42@vendor.example>",
    )
    invoice.add_attachment(PDF_BYTES, maintype="application", subtype="pdf", filename="invoice-42.pdf")
    messages["invoice.eml"] = invoice.as_bytes()

    messages["chinese.eml"] = _raw_text_message(
        base64.b64encode("中文测试".encode("gb2312")).decode(),
        "gb2312",
        CHINESE_TEXT.encode("gb2312"),
        "base64",
        "Thu, 07 Mar 2024 09:00:00 +0800",
        "Inbox,Unread",
    )
    messages["japanese.eml"] = _raw_text_message(
        base64.b64encode("日本語テスト".encode("iso-2022-jp")).decode(),
        "iso-2022-jp",
        JAPANESE_TEXT.encode("iso-2022-jp"),
        "7bit",
        "Fri, 08 Mar 2024 09:00:00 +0900",
        "Inbox",
    )
    spam = _eml(
        subject="You won a prize",
        sender="Prize <prize@spam.example>",
        date="Sat, 09 Mar 2024 01:00:00 +0000",
        body="Click here to claim.\n",
        labels="Spam",
    )
    messages["spam.eml"] = spam.as_bytes()
    trash = _eml(
        subject="Old prize notice",
        sender="Prize <prize@spam.example>",
        date="Sun, 10 Mar 2024 01:00:00 +0000",
        body="Deleted stuff.\n",
        labels="Trash",
    )
    messages["trash.eml"] = trash.as_bytes()
    plain_default = _eml(
        subject="No labels header",
        sender="Dave <dave@example.org>",
        date="Mon, 11 Mar 2024 11:00:00 +0000",
        body="This one has no X-Gmail-Labels header, so it lands in the inbox.\n",
    )
    messages["nested/default.eml"] = plain_default.as_bytes()

    for name, data in messages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    _write_takeout_mbox(root / "takeout" / "All mail Including Spam and Trash.mbox")
    return root


def _write_takeout_mbox(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    chunks: list[bytes] = []
    thread_id = "1790000000000000001"
    for index in range(FILLER_COUNT):
        day = 1 + index % 28
        message = _eml(
            subject=f"Bulk note {index:02d}",
            sender="Bulk Sender <bulk@lists.example>",
            date=f"{['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'][index % 7]}, {day:02d} Feb 2024 "
            f"{index % 24:02d}:00:00 +0000",
            body=f"Filler message number {index}.\n",
            labels="Inbox,Opened,Category Forums" if index % 2 else "Archived,Opened",
            message_id=f"<bulk-{index}@lists.example>",
            extra={"X-GM-THRID": thread_id if index < 3 else str(1790000000000000100 + index)},
        )
        chunks.append(b"From 1790000000000000001@xxx Thu Feb 01 00:00:00 +0000 2024\n")
        chunks.append(message.as_bytes().replace(b"\r\n", b"\n") + b"\n")
    path.write_bytes(b"".join(chunks))


class EmulatorAddress(Protocol):
    """What pointing a server at an emulator needs: an in-process `Emulator` or bench's emulator subprocess."""

    @property
    def url(self) -> str: ...

    @property
    def token_uri(self) -> str: ...


def emulator_env(emulator: EmulatorAddress, token_path: Path, **extra: str) -> dict[str, str]:
    """The variables that point the server at `emulator`, with the token file at `token_path`; `extra` adds
    (or overrides) other variables, e.g. `GMAIL_MCP_HTTP_TOKEN=...`."""
    return {
        "GMAIL_API_ENDPOINT": emulator.url,
        "GMAIL_TOKEN_URI": emulator.token_uri,
        "GMAIL_TOKEN_PATH": str(token_path),
        **extra,
    }


def emulator_settings(emulator: Emulator, directory: Path, **overrides: Any) -> Settings:
    """Settings from a clean environment (no `.env`) pointed at `emulator`, with a token it accepts written to
    `directory/token.json`; `overrides` are `Settings` fields (e.g. `quota_units_per_s=0`)."""
    token = emulator.write_token(directory / "token.json")
    return load_settings(env=emulator_env(emulator, token), dotenv=False).with_overrides(**overrides)


def gmail_service(emulator: Emulator, token_path: Path, *, timeout: float = 10) -> Any:
    """The real client stack: google-auth credentials from a token file, AuthorizedHttp, discovery build."""
    credentials = Credentials.from_authorized_user_file(str(token_path)).with_token_uri(emulator.token_uri)
    http = AuthorizedHttp(credentials, http=httplib2.Http(timeout=timeout))
    return build("gmail", "v1", http=http, client_options={"api_endpoint": emulator.url}, static_discovery=True)


def decode_b64url(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def control(emulator: Emulator, method: str, name: str, payload: dict[str, Any] | None = None) -> Any:
    """Calls the HTTP control plane directly (urllib, no auth)."""
    data = json.dumps(payload).encode() if payload is not None else (b"{}" if method == "POST" else None)
    request = urllib.request.Request(emulator.url + "/_emulator/" + name, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def wait_until_in_flight(emulator: Emulator, path_regex: str, timeout_s: float = 30.0) -> dict[str, Any]:
    """Until a request whose path matches has reached the emulator and is not answered yet: its log entry. Orders
    a test after "the call is waiting on Gmail" by the emulator's own log, not by sleeping and hoping."""
    pattern = re.compile(path_regex)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for entry in emulator.requests():
            if entry["duration_ms"] is None and pattern.search(entry["path"]):
                return entry
        time.sleep(0.005)
    raise AssertionError(f"no request to {path_regex} in flight within {timeout_s} s")
