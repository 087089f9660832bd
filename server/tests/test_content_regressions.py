"""Plain unit tests for the parser and emulator bugs the content-fidelity corpus revealed (one test per bug)."""

from __future__ import annotations

import base64
import email

from hypothesis import given
from hypothesis import strategies as st

from server.content.message import parse_message, parse_raw_message
from server.content.mime.part import unarmor_signed
from server.content.mime.raw import payload_from_bytes
from server.content.text.charsets import decode_text
from server.content.text.html_text import html_to_text
from server.content.text.tidy import tidy_text
from server.emulator.mime import decode_bytes, leaf_bytes
from server.tests.support.payloads import gmail_resource, message_bytes, multipart, text_part

HTML = "<h2>Spring sale</h2><p>All garden tools are 30% off until Sunday.</p>"


def test_placeholder_plain_gives_way_to_a_shorter_html_part() -> None:
    """The stand-in's boilerplate and URL can be longer than a short promo's HTML text."""
    placeholder = "Your email client cannot display HTML. View this email in your browser: https://example.com/v/1"
    raw = message_bytes(multipart("alternative", [text_part(placeholder), text_part(HTML, ctype="text/html")]))
    parsed = parse_message(gmail_resource(raw))
    assert parsed.body_source == "text/html" and parsed.body_text.startswith("Spring sale")


def test_a_real_short_plain_part_is_kept_when_the_html_is_nearly_empty() -> None:
    plain = "Trouble viewing this? The code is 4411 and the meeting starts at 10."
    html = '<img src="https://example.com/banner.png" alt="Hi">'
    raw = message_bytes(multipart("alternative", [text_part(plain), text_part(html, ctype="text/html")]))
    assert parse_message(gmail_resource(raw)).body_text == plain


def test_utf16_with_a_stray_odd_byte_costs_one_replacement_not_a_legacy_guess() -> None:
    text, how = decode_text("Grüße, 你好".encode("utf-16") + b"\n", "utf-16")
    assert (text, how) == ("Grüße, 你好\ufffd", "utf-16!")


def test_binary_junk_in_utf8_text_is_replaced_not_reread_as_cyrillic() -> None:
    junk = b"Readable start. " + bytes([0xD1, 0x18, 0xBE, 0xFB, 0x29, 0xDE, 0x8A, 0xE8, 0x15, 0x9C, 0x08, 0xC2])
    text, how = decode_text(junk, "utf-8")
    assert text.startswith("Readable start. ") and how == "utf-8!" and "\ufffd" in text


def test_raw_base64_with_a_dangling_character_is_decoded_leniently() -> None:
    """The stdlib returns such a body undecoded: the base64 text itself would have been shown."""
    body = base64.b64encode(b"Readable start of the body. " * 3) + b"\n!!junk!!\nQUJD="
    raw = b"Subject: x\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n" + body
    parsed = parse_raw_message({"raw": base64.urlsafe_b64encode(raw).decode()})
    assert parsed.body_text.startswith("Readable start of the body. Readable")


def test_emulator_decodes_damaged_base64_like_a_mail_reader() -> None:
    raw = b"Content-Type: text/plain\nContent-Transfer-Encoding: base64\n\n" + base64.b64encode(b"Hello there") + b"A"
    assert leaf_bytes(email.message_from_bytes(raw)).startswith(b"Hello there")


def test_emulator_converts_outlooks_korean_label_with_cp949() -> None:
    assert decode_bytes("똠양꿍".encode("cp949"), "ks_c_5601-1987") == "똠양꿍"


def test_raw_forwarded_part_has_the_inner_message_size() -> None:
    inner = message_bytes(text_part("inner text\n"), subject="inner")
    outer = message_bytes(multipart("mixed", [text_part("see below"), b"Content-Type: message/rfc822\n\n" + inner]))
    forwarded = payload_from_bytes(outer)["parts"][1]
    assert forwarded["mimeType"] == "message/rfc822" and forwarded["body"]["size"] >= len(inner) - 2


def test_inline_pgp_clearsigned_text_loses_its_armor() -> None:
    signed = (
        "Hi,\n-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nThe meeting is at 3pm.\n- -- \nAnn\n"
        "-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAd\n=abcd\n-----END PGP SIGNATURE-----\nBye"
    )
    assert unarmor_signed(signed) == "Hi,\nThe meeting is at 3pm.\n-- \nAnn\nBye"
    unsigned = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nno signature block"
    assert unarmor_signed(unsigned) == unsigned


def test_control_characters_never_reach_the_model() -> None:
    assert tidy_text("a\x18b\x0bc\x0cd\x7fe\tf") == "ab\nc\nde\tf"


@given(st.text(max_size=300))
def test_no_c0_control_survives_tidying_or_html_conversion(text: str) -> None:
    for out in (tidy_text(text), html_to_text(text)):
        assert not any((ch < " " and ch not in "\t\n") or ch == "\x7f" for ch in out)
