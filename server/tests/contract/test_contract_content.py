"""Contract: how real Gmail serves the text of what was inserted — body charsets and header values. Runs against
the emulator (`pytest`) and a real inbox (`pytest -m live`) on messages the test inserts itself.
"""

from __future__ import annotations

from server.tests.support.contract import ContractGmail, header, unb64url

# UTF-8 bytes of characters whose every byte Windows-1252 defines: Gmail's Latin-1 reading shows them as mojibake.
UTF8_TEXT = "It’s a café — 5 €"


def raw_message(gmail: ContractGmail, headers: list[bytes], body: bytes) -> bytes:
    lines = [f"From: {gmail.owner}".encode(), f"To: {gmail.owner}".encode(), *headers, b"MIME-Version: 1.0"]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def test_utf8_bytes_declared_latin1_come_back_converted_from_latin1(gmail: ContractGmail) -> None:
    """A text part declared iso-8859-1 whose bytes are UTF-8 is served converted from what it declares: Gmail
    reads the bytes as Latin-1 (Windows-1252) and hands over the UTF-8 of that, mojibake like `â€™`; body.size is
    the length of the original bytes.

    Evidence: server/content/text/mojibake.py (the product's repair of exactly this, from real mail); openclaw/gogcli
    #446 and PR #511 (Gmail normalizes body.data to UTF-8 from the declared charset, headers kept verbatim);
    macro-inc/macro PR #6133 (UTF-8 bullets in a Windows-1252-labelled part arrive as `â€¢`).
    """
    body = f"{UTF8_TEXT}\r\n{gmail.marker}\r\n".encode()
    raw = raw_message(
        gmail,
        [
            f"Subject: charset contract {gmail.marker}".encode(),
            b'Content-Type: text/plain; charset="iso-8859-1"',
            b"Content-Transfer-Encoding: 8bit",
        ],
        body,
    )
    ours = gmail.insert(raw)["id"]

    payload = gmail.get(ours, format="full")["payload"]
    assert payload["mimeType"] == "text/plain"
    assert unb64url(payload["body"]["data"]).decode("utf-8") == body.decode("cp1252")
    assert "â€™" in body.decode("cp1252")
    assert payload["body"]["size"] == len(body)


def test_encoded_words_arrive_decoded_in_metadata_and_full(gmail: ContractGmail) -> None:
    """RFC 2047 encoded words in Subject and From are served as text, in format=metadata and format=full.

    Evidence: Nango tests/get-message.test.json and the 2024 mocks of users/me/messages/{id} (header values are
    text, never `=?...?=`); Gmail API reference, MessagePart.headers.
    """
    raw = raw_message(
        gmail,
        [b"Subject: =?utf-8?q?Caf=C3=A9_na=C3=AFve?= " + gmail.marker.encode()],
        f"encoded words\r\n{gmail.marker}\r\n".encode(),
    ).replace(f"From: {gmail.owner}".encode(), f"From: =?iso-8859-1?q?Ren=E9_Contract?= <{gmail.owner}>".encode())
    ours = gmail.insert(raw)["id"]

    metadata = gmail.get(ours, format="metadata", metadataHeaders=["Subject", "From"])
    full = gmail.get(ours, format="full")
    for resource in (metadata, full):
        assert header(resource, "Subject") == f"Café naïve {gmail.marker}"
        sender = header(resource, "From") or ""
        assert "René Contract" in sender and gmail.owner in sender and "=?" not in sender, sender


def test_raw_8bit_header_bytes_read_as_latin1(gmail: ContractGmail) -> None:
    """Raw 8-bit bytes in a header of mail inserted through the API are read as Latin-1: the UTF-8 of `é`
    (C3 A9) comes back as `Ã©`.

    Evidence: the issue's field reports (docs/contract-tests.md); gaubert/gmvault #280 (8-bit header and body bytes
    re-read by Gmail, not kept as sent).
    """
    raw = raw_message(
        gmail,
        ["Subject: Café 8bit ".encode() + gmail.marker.encode()],
        f"raw header bytes\r\n{gmail.marker}\r\n".encode(),
    )
    ours = gmail.insert(raw)["id"]

    for fmt in ("metadata", "full"):
        assert header(gmail.get(ours, format=fmt), "Subject") == f"CafÃ© 8bit {gmail.marker}"
