"""Undo Gmail's UTF-8 re-encoding of mislabelled text: legacy bytes read as Windows-1252 / Latin-1. Pure, total.

Gmail re-encodes text parts to UTF-8 from their declared charset. When Big5, GBK, Shift_JIS, EUC-KR, cp1251 or
KOI8-R bytes (or UTF-8 ones) arrive labelled "us-ascii", "iso-8859-1" or unlabelled, Gmail reads them as
Windows-1252 and the UTF-8 it hands over spells mojibake ("³o¬O¤@­Ó´ú¸Õ" for "這是一個測試"). Every character of
such text maps back to exactly one byte, so the original bytes can be rebuilt and decoded again; the rebuilt
text replaces the mojibake only when it reads far better (see charset_guess.plausibility), so genuine French or
German text, whose accented letters sit inside Latin words, stays as it is.

Gmail also converts text from its declared single-byte charset when the bytes were valid UTF-8 all along (a
PHPMailer newsletter labelled iso-8859-1 arrives as "Stakeholdersâ€™"; koi8-r or iso-8859-2 labels give their
own mojibake). `repair_utf8_mojibake` undoes that even when it is sparse, but only when it is unambiguous: the
whole text re-encodes to the declared charset and those bytes are valid UTF-8 (genuine Latin-1, Cyrillic or
Central European text almost never is, since its accented letters stand next to ASCII), and what comes out holds
no control or IPA characters.
"""

from __future__ import annotations

import codecs
import re
from functools import lru_cache

from server.content.text.charset_guess import guess_decode, plausibility

_SAMPLE_BYTES = 65536  # the choice is made on a sample; the whole text is then decoded with the chosen codec


def _to_latin1_table() -> dict[int, int]:
    # Windows-1252's 0x80-0x9F letters (€, “, ”, Š...) back to their bytes; U+0080-U+00FF are their own bytes
    # already (Latin-1, and the C1 controls a WHATWG decoder gives for cp1252's five unassigned bytes).
    table = {}
    for byte in range(0x80, 0xA0):
        try:
            table[ord(bytes((byte,)).decode("cp1252"))] = byte
        except UnicodeDecodeError:
            continue
    return table


_TO_LATIN1 = _to_latin1_table()


def undo_mojibake(text: str) -> tuple[str, str] | None:
    """The original text of legacy bytes that were read as Windows-1252 / Latin-1 and re-encoded as UTF-8.

    Args:
        text: Text decoded from UTF-8 whose part was declared Latin-1, Windows-1252, US-ASCII or nothing.

    Returns:
        (text, codec) when the rebuilt bytes decode, in a CJK, Cyrillic or UTF-8 codec, to text far more
        plausible than `text`; None otherwise (including whenever a character has no single-byte origin).
    """
    if not isinstance(text, str) or not text:
        return None
    try:
        data = text.translate(_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        return None  # a character beyond Windows-1252: this text was never single bytes
    sample = _sample(data)
    high = len(sample) - len(sample.translate(None, bytes(range(0x80, 0x100))))
    if high < 4 or high * 10 < len(sample):
        return None
    before = plausibility(text[: len(sample)])
    utf8 = _strict(sample, "utf-8")
    if utf8 is not None and plausibility(utf8) > max(2.0, before):
        chosen = "utf-8"  # UTF-8 read as Windows-1252 ("Ã¼" for "ü"): valid UTF-8 again is near proof
    else:
        guessed = guess_decode(sample, exclude=("cp1252",))
        if guessed is None or plausibility(guessed[0]) <= max(8.0, 2 * before):
            return None
        chosen = guessed[1]
    whole = _strict(data, chosen)
    if whole is None:
        return data.decode(chosen, "replace"), chosen
    return whole, chosen


def _sample(data: bytes) -> bytes:
    if len(data) <= _SAMPLE_BYTES:
        return data
    cut = data.rfind(b"\n", 0, _SAMPLE_BYTES)  # a line end never splits a multibyte character
    return data[: cut + 1] if cut > 0 else data[:_SAMPLE_BYTES]


def _strict(data: bytes, codec: str) -> str | None:
    try:
        return data.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


# What a repair may produce: no C0/C1 controls, private-use or IPA letters (what "É”" or "Ê»" would become).
_IMPLAUSIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u0250-\u02af\ue000-\uf8ff\ufffd]")


@lru_cache(maxsize=64)
def _byte_table(codec: str) -> dict[int, int] | None:
    """Character -> byte for a single-byte codec (undefined bytes, and any C1 control, map from the character of
    the same number, as WHATWG and Latin-1 decoders give them); None when `codec` is not single-byte."""
    try:
        if len(b"\xc3\xa9\xe4\xb8\xad".decode(codec, "replace")) != 5:
            return None
        table: dict[int, int] = {}
        for byte in range(0x80, 0x100):
            try:
                char = bytes((byte,)).decode(codec)
            except UnicodeDecodeError:
                char = chr(byte)
            if len(char) != 1:
                return None
            table.setdefault(ord(char), byte)
        for byte in range(0x80, 0xA0):  # a C1 control is never text: the byte of the same number (Latin-1)
            table.setdefault(byte, byte)
        for code in range(0x80, 0x100):  # a Latin-1 character this codec has no byte for: made unencodable
            table.setdefault(code, 0x100)
        return table
    except (LookupError, ValueError, TypeError):
        return None


_C1 = re.compile("[\x80-\x9f]")


@lru_cache(maxsize=64)
def _charmap(codec: str) -> object:
    """A C encoding map for `codec` (undefined bytes from the character of the same number)."""
    chars = []
    for byte in range(256):
        try:
            chars.append(bytes((byte,)).decode(codec))
        except UnicodeDecodeError:
            chars.append(chr(byte))
    return codecs.charmap_build("".join(chars))


def single_byte(codec: str | None) -> bool:
    """Whether `codec` (a Python codec name) maps every byte to one character (Latin-1, cp1251, koi8-r...)."""
    return bool(codec) and not str(codec).replace("-", "_").startswith(("utf", "iso2022")) and bool(_byte_table(codec))


def repair_utf8_mojibake(text: str, codec: str | None = "cp1252") -> str | None:
    """The text UTF-8 bytes spelled before they were read as the single-byte `codec` and re-encoded.

    Args:
        text: Text as served (Gmail converted it from the declared charset to UTF-8).
        codec: The declared charset's Python codec (resolve_charset's name; iso-8859-1 means cp1252).

    Returns:
        The repaired text, or None when the text is ASCII, `codec` is not single-byte, or the repair is not
        unambiguous (some character has no byte in `codec`, the bytes are not valid UTF-8, or the result holds
        characters no real text would).
    """
    if not isinstance(text, str) or text.isascii() or not codec:
        return None
    table = _byte_table(codec) if single_byte(codec) else None
    if table is None:
        return None
    try:
        if _C1.search(text):
            # Characters become their bytes' code points; one the charset cannot hold stays above U+00FF (or is
            # made U+0100) and fails the encoding: then this is no single-byte reading of UTF-8.
            data = text.translate(table).encode("latin-1")
        else:  # the usual case, in C: C1 controls are the only extra mappings the charmap lacks
            data = codecs.charmap_encode(text, "strict", _charmap(codec))[0]
        repaired = data.decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return None
    if repaired == text or _IMPLAUSIBLE.search(repaired):
        return None
    return repaired
