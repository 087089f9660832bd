"""Legacy text mislabelled as ASCII/Latin-1 (or unlabelled) that Gmail re-encoded to UTF-8 through Windows-1252
or Latin-1 is rebuilt (server/content/text/mojibake.py); genuine text, Latin-1 or any other script, is not touched.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.content.message import parse_message, parse_raw_message
from server.content.text.charsets import decode_text
from server.content.text.mojibake import undo_mojibake
from server.tests.support.payloads import MODES, gmail_resource, message_bytes, text_part
from server.tests.support.properties import examples

LATIN_LABELS = ["us-ascii", "iso-8859-1", "windows-1252", "latin1", None]
# (codec of the original bytes, text); each long enough to be told apart from real Latin-1 text.
LEGACY = [
    ("big5hkscs", "這是一個測試郵件，請確認會議時間。謝謝您。"),
    ("big5hkscs", "您好，附件是本季的報告，請查收。如有問題請與我聯絡。"),
    ("gb18030", "你好，世界！这是一封测试邮件，请查收附件。谢谢。"),
    ("cp932", "こんにちは、会議の件です。よろしくお願いします。"),
    ("euc_jp", "こんにちは、これはテストメールです。"),
    ("cp949", "안녕하세요. 회의 일정을 확인 부탁드립니다."),
    ("cp1251", "Привет, это тестовое письмо. Встреча в четверг."),
    ("koi8_r", "Добрый день! Счёт во вложении, оплатите до пятницы."),
    ("utf-8", "Grüße aus München, bis bald. Ça va très bien, merci."),
    ("utf-8", "你好，世界！这是一封测试邮件。"),
]


def gmail_reencoded(data: bytes, via: str) -> bytes:
    """What Gmail hands over: `data` read as `via` byte by byte (cp1252's five unassigned bytes become C1
    controls, as a WHATWG decoder makes them) and written as UTF-8."""
    chars = []
    for byte in data:
        try:
            chars.append(bytes((byte,)).decode(via))
        except UnicodeDecodeError:
            chars.append(chr(byte))
    return "".join(chars).encode("utf-8")


@pytest.mark.parametrize(("codec", "text"), LEGACY, ids=[f"{c}-{t[:4]}" for c, t in LEGACY])
@pytest.mark.parametrize("via", ["cp1252", "latin-1"])
@pytest.mark.parametrize("label", LATIN_LABELS)
def test_mislabelled_legacy_text_is_rebuilt(codec: str, text: str, via: str, label: str | None) -> None:
    decoded, how = decode_text(gmail_reencoded(text.encode(codec), via), label)
    assert decoded == text and how.endswith("?")


def test_big5_declared_us_ascii_through_whole_messages() -> None:
    # The message: Big5 bytes labelled us-ascii. Gmail's UTF-8 mode re-encodes them through cp1252
    # (the test helper plays that); declared mode and raw keep the Big5 bytes (the older recovery path).
    text = "這是一個測試郵件，請確認會議時間。謝謝您。"
    raw = message_bytes(text_part(text.encode("big5"), charset="us-ascii", cte="base64"))
    parsed = [parse_message(gmail_resource(raw, mode)) for mode in MODES]
    parsed.append(parse_raw_message(gmail_resource(raw, fmt="raw")))
    for message in parsed:
        assert message.body_text == text
        assert any("us-ascii" in note and "big5hkscs" in note for note in message.notes)


def test_undeclared_html_part_reencoded_by_gmail() -> None:
    text = "您好，附件是本季的報告，請查收。"
    html = f"<html><body><p>{text}</p></body></html>".encode("big5")
    resource = gmail_resource(message_bytes(text_part(html, ctype="text/html", charset=None)), "declared")
    resource["payload"]["body"]["data"] = _b64(gmail_reencoded(html, "cp1252"))
    assert parse_message(resource).body_text == text


def _b64(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).decode().rstrip("=")


GENUINE_LATIN = [
    "Café crème, naïve résumé.",
    "Grüße aus München – “smart quotes” and €5",
    "Ærø, Ölfäß, ça va très bien: «naïve» façade – déjà vu.",
    "Zürich Straße 5, 8001 Zürich. Öffnungszeiten: Mo–Fr 9–18 Uhr.",
    "¿Dónde está la estación? ¡Allí, señor! Año 2024, pingüino.",
    "Prezzo: 5 € — già pagato. Perché no? Città, università.",
    "ÀÉÎÕÜ àéîõü ÆØÅ æøå ß ÿ",
    "Olá, João! A reunião é às 10h. Obrigação, ação, coração.",
]


@pytest.mark.parametrize("text", GENUINE_LATIN)
@pytest.mark.parametrize("label", LATIN_LABELS)
def test_genuine_latin1_text_is_left_alone(text: str, label: str | None) -> None:
    assert decode_text(text.encode("utf-8"), label) == (text, "utf-8")  # Gmail's UTF-8 mode
    assert undo_mojibake(text) is None
    if label and text.encode("cp1252", "ignore").decode("cp1252") == text:
        assert decode_text(text.encode("cp1252"), label)[0] == text  # declared bytes


def test_unrecoverable_text_is_left_alone() -> None:
    assert undo_mojibake("") is None and undo_mojibake("plain ASCII") is None
    assert undo_mojibake("³o¬O \ufffd ¤@­Ó") is None  # U+FFFD has no byte to go back to
    assert undo_mojibake("Ab³o") is None  # too little to judge


# Words of many scripts, as genuine UTF-8 mail carries them (Gmail's conversion of any label, or real UTF-8).
WORDS = [
    *[
        "hello",
        "world",
        "Café",
        "crème",
        "naïve",
        "Grüße",
        "München",
        "Straße",
        "señor",
        "año",
        "pingüino",
        "città",
        "perché",
    ],
    *["João", "ação", "coração", "żółć", "źdźbło", "Dzień", "dobry", "Příliš", "žluťoučký", "kůň", "Ærø", "Ølfäß"],
    *[
        "İstanbul",
        "ğüşıöç",
        "déjà",
        "façade",
        "€5",
        "“quoted”",
        "–",
        "—",
        "Привет",
        "письмо",
        "четверг",
        "Ελληνικά",
        "γλώσσα",
    ],
    *["中文", "你好世界", "謝謝您", "日本語", "こんにちは", "カタカナ", "한국어", "안녕하세요"],
    *["العربية", "مرحبا", "עברית", "שלום", "हिन्दी", "नमस्ते", "ภาษาไทย", "สวัสดี"],
    *["Tiếng", "Việt", "xin", "chào", "👍🏽", "✓", "①", "㈱", "12:30", "2024"],
]


@given(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=40),
    st.sampled_from(["\n", " ", ", ", ". "]),
    st.sampled_from([*LATIN_LABELS, "utf-8", "gb2312", "shift_jis"]),
)
@settings(max_examples=examples(1.3), deadline=None)
def test_property_genuine_utf8_text_of_many_scripts_is_never_altered(
    words: list[str], glue: str, label: str | None
) -> None:
    text = glue.join(words)
    assert decode_text(text.encode("utf-8"), label)[0] == text


ASCII_LINES = [
    "Ref: PO-2024-0042",
    "Meeting: 10:30, room 4",
    "https://example.com/report?id=7",
    "-- ",
    "Tel +1 555 0100",
]


@given(
    st.sampled_from([case for case in LEGACY if case[0] != "utf-8"]),
    st.lists(st.one_of(st.just(None), st.sampled_from(ASCII_LINES)), min_size=1, max_size=8),
)
@settings(max_examples=examples(0.33), deadline=None)
def test_property_mislabelled_text_with_ascii_lines_is_rebuilt(case: tuple[str, str], layout: list) -> None:
    codec, sentence = case
    text = "\n".join(sentence if line is None else line for line in [None, *layout])
    assert decode_text(gmail_reencoded(text.encode(codec), "cp1252"), "us-ascii")[0] == text
