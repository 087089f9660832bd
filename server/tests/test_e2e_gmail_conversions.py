"""gmail_get_message over a real MCP session against the emulator serving mail as recorded real Gmail does:
text parts converted from their declared charset even when the bytes were UTF-8, header values decoded (RFC 2047
as text, raw 8-bit bytes read as Latin-1). The server repairs the mojibake and parses the decoded headers.

Evidence: issue "Right against real Gmail" items 5 and 8: a PHPMailer newsletter labelled iso-8859-1 arrives with
`Stakeholdersâ€™` and `body.size` the original length (field reports gauteh/lieer #207, openclaw/gogcli
#338/#449; Nango integration-templates google-mail mocks .../messages/*.json with text parts); Gmail serves RFC
2047 words as text in the metadata and full formats and reads raw 8-bit header bytes of API-created mail as
Latin-1.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.client import Client

from server.protocol.dispatch import build_server
from server.runtime.accounts import AccountRegistry
from server.runtime.observability import Metrics
from server.tests.support.emulator import decode_b64url, emulator_settings, gmail_service

pytestmark = pytest.mark.anyio

FILLER = "Thank you for subscribing to our quarterly newsletter. Here is what happened this quarter.\n" * 12
NEWSLETTER = FILLER + "Our Stakeholders’ meeting moved to Friday – see you there.\n"
GENUINE = "Grüße aus München! Broken shops print Â£ where they mean £; the café is open.\n"
RUSSIAN = "Добрый день! Счёт во вложении.\n"


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _eml(name: str, headers: bytes, body: bytes, charset: str) -> tuple[str, bytes]:
    head = (
        b"From: News <news@example.com>\r\nTo: me@example.com\r\nDate: Tue, 05 Mar 2024 10:00:00 +0100\r\n"
        + headers
        + f"Message-ID: <{name}@example.com>\r\nMIME-Version: 1.0\r\n".encode()
        + f'Content-Type: text/plain; charset="{charset}"\r\nContent-Transfer-Encoding: 8bit\r\n\r\n'.encode()
    )
    return name, head + body


MAILS = [
    _eml(
        "newsletter", b"Subject: =?iso-8859-1?Q?Stakeholders=E2=80=99_update?=\r\n", NEWSLETTER.encode(), "iso-8859-1"
    ),
    _eml("genuine", b"Subject: =?iso-8859-1?Q?Gr=FC=DFe?=\r\n", GENUINE.encode("latin-1"), "iso-8859-1"),
    _eml("koi8", "Subject: Счёт\r\n".encode(), RUSSIAN.encode(), "koi8-r"),  # raw 8-bit UTF-8 subject
    _eml(
        "decoded-from",
        b"Subject: =?utf-8?Q?=3D=3Futf-8=3FB=3FSGk=3D=3F=3D_is_literal,_caf=C3=A9?=\r\n"
        b"Reply-To: =?utf-8?Q?Doe=2C_John_=22JD=22?= <jd@example.com>\r\n",
        b"Hello.\n",
        "utf-8",
    ),
]


def write_mailbox(root: Path) -> Path:
    root.mkdir()
    for name, raw in MAILS:
        (root / f"{name}.eml").write_bytes(raw)
    return root


async def read_all(make_emulator, tmp_path: Path, **options: str) -> dict[str, dict]:
    emulator = make_emulator(write_mailbox(tmp_path / "mail"), **options)
    registry = AccountRegistry.single(
        emulator_settings(emulator, tmp_path, quota_units_per_s=0.0, warm_up=False), metrics=Metrics()
    )
    ids = {stored.message["Message-ID"].strip("<>").split("@")[0]: stored.id for stored in emulator.store.messages}
    out = {}
    async with Client(build_server(registry), mode="legacy") as client:
        for name, message_id in ids.items():
            result = await client.call_tool("gmail_get_message", {"message_id": message_id})
            assert result.is_error is False, result.content[0].text
            out[name] = {**result.structured_content, **result.structured_content["headers"]}
    return out


async def test_the_emulator_serves_what_gmail_serves(anyio_backend, make_emulator, tmp_path) -> None:
    emulator = make_emulator(write_mailbox(tmp_path / "mail"))
    service = gmail_service(emulator, emulator.write_token(tmp_path / "token.json"))
    by_name = {stored.message["Message-ID"].strip("<>").split("@")[0]: stored.id for stored in emulator.store.messages}
    full = service.users().messages().get(userId="me", id=by_name["newsletter"], format="full").execute()
    text = decode_b64url(full["payload"]["body"]["data"]).decode("utf-8")
    assert "Stakeholdersâ€™ meeting" in text and full["payload"]["body"]["size"] == len(NEWSLETTER.encode())
    headers = {h["name"]: h["value"] for h in full["payload"]["headers"]}
    assert headers["Subject"] == "Stakeholdersâ€™ update"  # the word's UTF-8 read as its iso-8859-1 label
    meta = service.users().messages().get(userId="me", id=by_name["koi8"], format="metadata").execute()
    assert {h["name"]: h["value"] for h in meta["payload"]["headers"]}["Subject"] == "Ð¡Ñ\x87Ñ\x91Ñ\x82"


async def test_the_server_repairs_and_parses_what_gmail_serves(anyio_backend, make_emulator, tmp_path) -> None:
    read = await read_all(make_emulator, tmp_path)
    assert "Stakeholders’ meeting moved to Friday – see you there." in read["newsletter"]["body_text"]
    assert read["newsletter"]["subject"] == "Stakeholders’ update"
    assert read["genuine"]["body_text"].strip() == GENUINE.strip()  # real Latin-1 text, "Â£" included, stays
    assert read["genuine"]["subject"] == "Grüße"
    assert read["koi8"]["body_text"].strip() == RUSSIAN.strip() and read["koi8"]["subject"] == "Счёт"
    decoded = read["decoded-from"]
    assert decoded["subject"] == "=?utf-8?B?SGk=?= is literal, café"  # decoded once by Gmail, never twice
    assert decoded["reply_to"] == 'Doe, John "JD" <jd@example.com>'


async def test_the_server_reads_raw_header_values_too(anyio_backend, make_emulator, tmp_path) -> None:
    read = await read_all(make_emulator, tmp_path, header_values="raw")
    assert read["newsletter"]["subject"] == "Stakeholders’ update"
    assert read["genuine"]["subject"] == "Grüße" and read["koi8"]["subject"] == "Счёт"
