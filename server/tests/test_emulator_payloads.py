"""Gmail resource shapes, charsets, snippets, and the fields= selector (pure, no HTTP)."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.emulator import ApiError, MailStore, load_mailbox
from server.emulator.fields import MESSAGE, MESSAGE_LIST, apply_fields, parse_fields
from server.emulator.listing import MessageIndex
from server.emulator.mime import html_to_text, snippet
from server.emulator.payloads import AttachmentIds, PayloadBuilder
from server.tests.support.emulator import CHINESE_TEXT, JAPANESE_TEXT, PDF_BYTES, build_mailbox, decode_b64url


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> MailStore:
    return load_mailbox(build_mailbox(tmp_path_factory.mktemp("payloads") / "mail"))


@pytest.fixture(scope="module")
def index(store: MailStore) -> MessageIndex:
    return MessageIndex(store)


def test_multipart_tree_part_ids_and_attachment(store: MailStore) -> None:
    builder = PayloadBuilder()
    invoice = store.find("Invoice 42")[0]
    payload = builder.part_tree(invoice)
    assert payload["partId"] == "" and payload["mimeType"] == "multipart/mixed"
    assert payload["body"] == {"size": 0} and payload["filename"] == ""
    text, pdf = payload["parts"]
    assert (text["partId"], pdf["partId"]) == ("0", "1")
    assert decode_b64url(text["body"]["data"]) == b"Please find the invoice attached.\n"
    assert pdf["filename"] == "invoice-42.pdf" and "data" not in pdf["body"]
    assert pdf["body"]["size"] == len(PDF_BYTES)
    assert {"name": "Content-Transfer-Encoding", "value": "base64"} in pdf["headers"]  # headers as written
    attachment = builder.attachment(invoice, pdf["body"]["attachmentId"])
    assert decode_b64url(attachment["data"]) == PDF_BYTES and attachment["size"] == len(PDF_BYTES)


def test_nested_part_ids(tmp_path: Path) -> None:
    raw = (
        b'Content-Type: multipart/mixed; boundary="o"\r\nSubject: nest\r\n\r\n--o\r\n'
        b'Content-Type: multipart/alternative; boundary="i"\r\n\r\n--i\r\nContent-Type: text/plain\r\n\r\nhi\r\n'
        b"--i\r\nContent-Type: text/html\r\n\r\n<p>hi</p>\r\n--i--\r\n--o--\r\n"
    )
    (tmp_path / "n.eml").write_bytes(raw)
    tree = PayloadBuilder().part_tree(load_mailbox(tmp_path).messages[0])
    inner = tree["parts"][0]
    assert inner["partId"] == "0" and [p["partId"] for p in inner["parts"]] == ["0.0", "0.1"]


def test_attachment_ids_are_opaque_unstable_and_checked(store: MailStore) -> None:
    ids = AttachmentIds()
    invoice, other = store.find("Invoice 42")[0], store.find("Quarterly report")[-1]
    first, second = ids.mint(invoice.id, "1"), ids.mint(invoice.id, "1")
    assert first != second and len(first) > 60
    assert all(c.isalnum() or c in "-_" for c in first)
    assert ids.read(invoice.id, first) == "1"
    for bad_owner, token in ((other.id, first), (invoice.id, first[:-4] + "AAAA"), (invoice.id, "nonsense")):
        with pytest.raises(ApiError) as caught:
            ids.read(bad_owner, token)
        assert caught.value.code == 400


@pytest.mark.parametrize(
    ("subject", "charset", "text"),
    [("中文", "gb2312", CHINESE_TEXT), ("日本語", "iso-2022-jp", JAPANESE_TEXT)],
)
def test_body_charset_modes(store: MailStore, subject: str, charset: str, text: str) -> None:
    message = store.find(subject)[0]
    utf8 = PayloadBuilder("utf8").part_tree(message)
    declared = PayloadBuilder("declared").part_tree(message)
    assert decode_b64url(utf8["body"]["data"]).decode("utf-8").strip() == text
    assert decode_b64url(declared["body"]["data"]).decode(charset).strip() == text
    assert decode_b64url(declared["body"]["data"]) != decode_b64url(utf8["body"]["data"])
    content_type = next(h["value"] for h in utf8["headers"] if h["name"] == "Content-Type")
    assert charset in content_type  # the header still names the declared charset
    with pytest.raises(ValueError):
        PayloadBuilder("latin1")


def test_formats(store: MailStore, index: MessageIndex) -> None:
    builder = PayloadBuilder()
    report = store.find("Quarterly report")[-1]
    minimal = builder.message(report, index.snippets[report.id], "minimal")
    assert set(minimal) == {"id", "threadId", "labelIds", "snippet", "sizeEstimate", "historyId", "internalDate"}
    assert minimal["internalDate"] == str(report.internal_date) and minimal["sizeEstimate"] == len(report.raw)
    metadata = builder.message(report, "", "metadata", ["subject", "FROM"])
    assert [h["name"] for h in metadata["payload"]["headers"]] == ["From", "Subject"]
    raw = builder.message(report, "", "raw")
    assert decode_b64url(raw["raw"]) == report.raw and "payload" not in raw
    with pytest.raises(ApiError):
        builder.message(report, "", "everything")


def test_snippets(store: MailStore, index: MessageIndex) -> None:
    assert index.snippets[store.find("Café")[0].id] == (
        "Bob&#39;s &quot;special&quot; &lt;deal&gt; &amp; more: 2 coffees for 1."
    )
    assert index.snippets[store.find("Product launch")[0].id] == "Launch day Meet the new widget."
    assert index.snippets[store.find("中文")[0].id] == CHINESE_TEXT
    assert len(snippet("word " * 100)) <= 200
    assert html_to_text("<style>x</style><p>a&amp;b</p>").strip() == "a&b"


def test_header_values_are_served_decoded_unless_raw_is_asked(store: MailStore) -> None:
    """Gmail serves RFC 2047 words as text in the metadata and full formats (issue "Right against real Gmail",
    item 8); `header_values="raw"` keeps them as written, so a client is tested against both."""
    message = store.find("Café")[0]
    decoded = PayloadBuilder().part_tree(message)
    raw = PayloadBuilder(header_values="raw").part_tree(message)
    assert next(h["value"] for h in raw["headers"] if h["name"] == "Subject").startswith("=?utf-8?")
    subject = next(h["value"] for h in decoded["headers"] if h["name"] == "Subject")
    assert "Café" in subject and "=?" not in subject
    metadata = PayloadBuilder().message(message, "", "metadata", ["Subject"])
    assert metadata["payload"]["headers"] == [{"name": "Subject", "value": subject}]
    with pytest.raises(ValueError):
        PayloadBuilder(header_values="encoded")


def test_fields_selection() -> None:
    message = {
        "id": "a",
        "threadId": "t",
        "snippet": "s",
        "internalDate": "1",
        "payload": {"partId": "", "headers": [{"name": "X", "value": "1"}], "body": {"size": 0}, "parts": []},
    }
    assert apply_fields(message, "id,threadId,snippet,internalDate,payload/headers", MESSAGE) == {
        "id": "a",
        "threadId": "t",
        "snippet": "s",
        "internalDate": "1",
        "payload": {"headers": [{"name": "X", "value": "1"}]},
    }
    assert apply_fields(message, "payload(headers(name))", MESSAGE) == {"payload": {"headers": [{"name": "X"}]}}
    listing = {"messages": [{"id": "a", "threadId": "t"}], "resultSizeEstimate": 1}
    assert apply_fields(listing, "messages(id),nextPageToken", MESSAGE_LIST) == {"messages": [{"id": "a"}]}
    assert apply_fields(message, "", MESSAGE) is message
    assert apply_fields(message, "*", MESSAGE) == message


@pytest.mark.parametrize("bad", ["payload/header", "id(", "id)", "a,,b", "id/x", "messages", "payload((id))", "i d"])
def test_invalid_fields(bad: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse_fields(bad, MESSAGE)
    assert caught.value.code == 400


@pytest.mark.parametrize(
    ("declared", "body", "served"),
    [
        # UTF-8 under a Latin-1 label: converted from the label all the same, so the data spells mojibake
        ("iso-8859-1", "You’re in — 6 weeks".encode(), "Youâ€™re in â€” 6 weeks"),
        ("us-ascii", "Grüße".encode(), "GrÃ¼ÃŸe"),
        ("koi8-r", "Привет".encode(), "п÷я─п╦п╡п╣я┌"),
        ("iso-8859-1", "Here’s the menu – café".encode("cp1252"), "Here’s the menu – café"),  # cp1252 bytes
        ("iso-8859-1", b"\x81\x9d", "\x81\x9d"),  # bytes cp1252 leaves undefined: the C1 control of that number
        (None, "naïve café".encode(), "naïve café"),  # no charset at all
    ],
)
def test_text_is_converted_from_the_declared_charset(
    tmp_path: Path, declared: str | None, body: bytes, served: str
) -> None:
    """Recorded real Gmail converts a text part to UTF-8 from its declared charset even when the bytes were valid
    UTF-8 (a PHPMailer newsletter labelled iso-8859-1 arrives with `Stakeholdersâ€™`; field reports gauteh/lieer
    #207, openclaw/gogcli #338/#449), and `body.size` stays the original length."""
    content_type = f'text/plain; charset="{declared}"' if declared else "text/plain"
    raw = f"Subject: x\r\nContent-Type: {content_type}\r\nContent-Transfer-Encoding: 8bit\r\n\r\n".encode() + body
    (tmp_path / "m.eml").write_bytes(raw)
    store = load_mailbox(tmp_path)
    tree = PayloadBuilder("utf8").part_tree(store.messages[0])
    assert decode_b64url(tree["body"]["data"]).decode("utf-8") == served
    assert tree["body"]["size"] == len(body)
    assert decode_b64url(PayloadBuilder("declared").part_tree(store.messages[0])["body"]["data"]) == body
