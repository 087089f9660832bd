"""Undo Gmail's UTF-8 re-encoding of mislabelled text: legacy bytes read as Windows-1252 / Latin-1. Pure, total.

Gmail re-encodes text parts to UTF-8 from their declared charset. When Big5, GBK, Shift_JIS, EUC-KR, cp1251 or
KOI8-R bytes (or UTF-8 ones) arrive labelled "us-ascii", "iso-8859-1" or unlabelled, Gmail reads them as
Windows-1252 and the UTF-8 it hands over spells mojibake ("³o¬O¤@­Ó´ú¸Õ" for "這是一個測試"). Every character of
such text maps back to exactly one byte, so the original bytes can be rebuilt and decoded again; the rebuilt
text replaces the mojibake only when it reads far better (see charset_guess.plausibility), so genuine French or
German text, whose accented letters sit inside Latin words, stays as it is.
"""

from __future__ import annotations

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
