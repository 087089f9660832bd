"""UTF-8 that Gmail converted from a declared single-byte charset is repaired, even when sparse; genuine text in
that charset is not (server/content/text/mojibake.py repair_utf8_mojibake, used by decode_text and
decode_header_value).

Evidence: a PHPMailer newsletter labelled iso-8859-1 whose bytes were UTF-8 arrives from Gmail as
"Stakeholdersâ€™" (field reports gauteh/lieer #207, openclaw/gogcli #338/#449; Nango integration-templates
google-mail mocks, messages with text parts). Gmail reads 8-bit header bytes of mail created through the API as
Latin-1, so "José" arrives as "JosÃ©".
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.content.message import parse_addresses
from server.content.text.charsets import decode_header_value, decode_text
from server.content.text.mojibake import repair_utf8_mojibake
from server.tests.support.properties import examples


def served(text: str, codec: str) -> str:
    """What Gmail serves: the UTF-8 bytes of `text` read as `codec`, undefined bytes as C1 controls."""
    out = []
    for byte in text.encode("utf-8"):
        try:
            out.append(bytes((byte,)).decode(codec))
        except UnicodeDecodeError:
            out.append(chr(byte))
    return "".join(out)


FILLER = "Dear subscriber, thank you for reading our monthly update. " * 40
SPARSE = [
    ("iso-8859-1", "cp1252", FILLER + "Our Stakeholders’ meeting is on Friday."),
    ("windows-1252", "cp1252", "Quarterly report – “final” version… see you there " + FILLER),
    ("us-ascii", "cp1252", FILLER + "Price: £5, ©2025"),
    ("latin1", "cp1252", "José García wrote: " + FILLER),
    ("koi8-r", "koi8_r", FILLER + "Подпись: Иван"),
    ("windows-1251", "cp1251", FILLER + "С уважением, Анна"),
    ("iso-8859-2", "iso8859_2", FILLER + "Zażółć gęślą jaźń"),
    ("iso-8859-15", "iso8859_15", FILLER + "Ça coûte 5 €"),
    (None, "cp1252", FILLER + "Stakeholders’ view"),
]


@pytest.mark.parametrize(("label", "codec", "text"), SPARSE, ids=[f"{c}-{t[-8:]}" for _, c, t in SPARSE])
def test_sparse_mojibake_in_a_body_is_repaired(label: str | None, codec: str, text: str) -> None:
    mojibake = served(text, codec)
    assert mojibake != text
    decoded, how = decode_text(mojibake.encode("utf-8"), label)
    assert decoded == text and how == "utf-8?"


GENUINE = [
    ("iso-8859-1", "Grüße aus München, die Straße ist gesperrt."),
    ("iso-8859-1", "Ça coûte 5 €, déjà payé. À bientôt !"),
    ("iso-8859-1", "Blåbærsyltetøy på brødskiva, takk så mye."),
    ("iso-8859-1", "Broken sites show Â£ where they mean £."),
    ("iso-8859-1", "Â£ Ã© ÃŸ: the classic mojibake, quoted in a café."),
    ("windows-1252", "CAFÉ” and “ÉTÉ”, typed in capitals."),
    ("koi8-r", "Привет, как дела? Всё хорошо."),
    ("windows-1251", "Привет, как дела? Всё хорошо."),
    ("iso-8859-2", "Zażółć gęślą jaźń."),
    ("utf-8", "Stakeholdersâ€™ is what the newsletter said."),
]


@pytest.mark.parametrize(("label", "text"), GENUINE, ids=[t[:12] for _, t in GENUINE])
def test_genuine_text_in_the_declared_charset_stays(label: str, text: str) -> None:
    assert decode_text(text.encode("utf-8"), label)[0] == text


def test_repair_needs_the_whole_text_to_round_trip() -> None:
    assert repair_utf8_mojibake("Stakeholdersâ€™ café", "cp1252") is None  # "é" alone is no UTF-8 byte
    assert repair_utf8_mojibake("Stakeholdersâ€™ 漢字", "cp1252") is None  # no cp1252 byte for 漢
    assert repair_utf8_mojibake("Stakeholdersâ€™", "utf-8") is None  # not a single-byte charset
    assert repair_utf8_mojibake("Stakeholdersâ€™", "cp1252") == "Stakeholders’"
    assert repair_utf8_mojibake("É”", "cp1252") is None  # would give an IPA letter: genuine capitals


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("JosÃ© GarcÃ­a <jose@example.com>", "José García <jose@example.com>"),
        ("Stakeholdersâ\x80\x99 update", "Stakeholders’ update"),  # read as Latin-1: C1 controls, not "€™"
        ("Stakeholdersâ€™ update", "Stakeholders’ update"),
        ("ÐŸÑ€Ð¸Ð²ÐµÑ‚", "Привет"),
        ("РџСЂРёРІРµС‚", "Привет"),
        ("Grüße aus München", "Grüße aus München"),
        ("Привет, как дела", "Привет, как дела"),
        ("Café — =?utf-8?B?SGk=?= is literal", "Café — =?utf-8?B?SGk=?= is literal"),
        # legacy 8-bit header bytes read as Latin-1
        ("会议通知：明天上午十点".encode("gb18030").decode("latin-1"), "会议通知：明天上午十点"),
        ("打ち合わせの件について".encode("cp932").decode("latin-1"), "打ち合わせの件について"),
        ("Réunion à été déplacée à jeudi", "Réunion à été déplacée à jeudi"),
        ("Ça coûte très cher, déjà payé", "Ça coûte très cher, déjà payé"),
    ],
)
def test_header_values_served_decoded_are_repaired_and_never_decoded_twice(value: str, expected: str) -> None:
    assert decode_header_value(value) == expected


@given(st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=60))
@settings(max_examples=examples(1.0), deadline=None)
def test_property_any_utf8_text_survives_a_latin1_reading(text: str) -> None:
    """Whatever the author wrote, the repair gives it back exactly (or leaves the served text when the reading
    made nothing that is not already text)."""
    mojibake = served(text, "cp1252")
    repaired = repair_utf8_mojibake(mojibake, "cp1252")
    assert (repaired if repaired is not None else mojibake) in (text, mojibake)


@pytest.mark.parametrize(
    ("value", "name", "email"),
    [
        ('Doe, John "JD" <jd@example.com>', 'Doe, John "JD"', "jd@example.com"),
        ('"Doe, John \\"JD\\"" <jd@example.com>', 'Doe, John "JD"', "jd@example.com"),  # raw, quoted
        ("Smith <Jr> <jr@example.com>", "Smith <Jr>", "jr@example.com"),
        ("Pérez, Juan <juan@example.es>", "Pérez, Juan", "juan@example.es"),
        ("Café =?utf-8?B?SGk=?= <cafe@example.com>", "Café =?utf-8?B?SGk=?=", "cafe@example.com"),
        ("JosÃ© GarcÃ­a <jose@example.com>", "José García", "jose@example.com"),
    ],
)
def test_a_display_name_gmail_decoded_still_parses(value: str, name: str, email: str) -> None:
    """Gmail serves From decoded: `=?utf-8?Q?Doe=2C_John_=22JD=22?= <jd@...>` arrives as `Doe, John "JD" <jd@...>`."""
    (address,) = parse_addresses(value)
    assert (address.name, address.email) == (name, email)
