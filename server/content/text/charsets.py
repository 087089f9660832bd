"""Bytes -> text for mail: declared charsets with superset aliases, a small guess, RFC 2047 and RFC 2231.

Every function here is total: bad bytes, unknown charset names and malformed encoded words give readable text
(with U+FFFD at worst), never an exception. No I/O.

Decoding order (`decode_text`): strict UTF-8 (Gmail re-encodes text parts to UTF-8 from the declared charset but
keeps the original charset in the header; UTF-8 it converted from a single-byte label, and mislabelled legacy text
it re-encoded through Windows-1252, are rebuilt, see mojibake.py),
then the declared charset through its superset alias, then a byte-level guess scored by how plausible the decoded
text is, then replacement characters.
"""

from __future__ import annotations

import binascii
import codecs
import re
from functools import lru_cache

from server.content.text.charset_guess import guess_decode, plausibility
from server.content.text.iso2022jp import JIS_MARK, decode_iso2022jp
from server.content.text.mojibake import repair_utf8_mojibake, single_byte, undo_mojibake


def _labels(names: str, codec: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), codec)


# Senders label text with the narrow legacy name but use the vendor superset (GBK chars in "gb2312" mail,
# Windows-1252 quotes in "iso-8859-1" mail, NEC/IBM extensions in "shift_jis" mail), so decode with the superset.
_ALIASES: dict[str, str] = {
    **_labels("gb2312 gbk x-gbk euc-cn x-euc-cn cp936 ms936 csgb2312 gb_2312-80 chinese gb18030", "gb18030"),
    **_labels(
        "ks_c_5601-1987 ks_c_5601 ks_c_5601-1989 euc-kr x-euc-kr korean cp949 windows-949 x-windows-949 uhc "
        "ksc5601 csksc56011987",
        "cp949",
    ),
    **_labels(
        "iso-8859-1 iso8859-1 iso_8859-1 latin1 latin-1 l1 us-ascii ascii ansi_x3.4-1968 cp819 ibm819 "
        "windows-1252 cp1252 x-cp1252",
        "cp1252",
    ),
    **_labels("shift_jis shift-jis sjis x-sjis ms_kanji csshiftjis windows-31j cp932 x-ms-cp932 ms932", "cp932"),
    **_labels(
        "iso-2022-jp csiso2022jp iso2022jp iso-2022-jp-1 iso-2022-jp-ms cp50220 cp50221 cp50222 iso2022_jp iso2022-jp",
        "iso-2022-jp",
    ),
    **_labels("big5 big-5 x-big5 cn-big5 csbig5 big5-hkscs cp950", "big5hkscs"),
    **_labels("utf8 utf-8 utf8mb4 unicode-1-1-utf-8 x-unicode20utf8", "utf-8"),
    **_labels("iso-8859-9 latin5 windows-1254", "cp1254"),
    **_labels("tis-620 iso-8859-11 windows-874", "cp874"),
}
# Codecs Python knows that are not mail charsets: decoding with them would reinterpret the text (escapes,
# IDNA) or always fail.
_REFUSED = {"idna", "punycode", "unicode_escape", "raw_unicode_escape", "undefined", "charmap", "mbcs", "oem"}


@lru_cache(maxsize=256)
def resolve_charset(declared: str | None) -> str | None:
    """Map a declared charset label to the Python codec used to decode it.

    Args:
        declared: The label from a Content-Type parameter or an encoded word (any case, may be quoted).

    Returns:
        A codec name (superset aliases applied), "iso-2022-jp" for the project's own decoder, or None when the
        label is missing, unknown or not a text charset.
    """
    if not isinstance(declared, str):
        return None
    label = declared.strip().strip("\"'").lower().split("*", 1)[0]  # RFC 2231 "utf-8*en" carries a language
    if not label:
        return None
    if label in _ALIASES:
        return _ALIASES[label]
    try:
        info = codecs.lookup(label)
    except (LookupError, ValueError, TypeError):
        return None
    if info.name.replace("-", "_") in _REFUSED or not getattr(info, "_is_text_encoding", True):
        return None
    return _ALIASES.get(info.name.replace("_", "-"), info.name)


def _strict(data: bytes, codec: str) -> str | None:
    try:
        if codec == "iso-2022-jp":
            return decode_iso2022jp(data)
        return data.decode(codec)
    except (UnicodeDecodeError, LookupError, ValueError):
        return None


def _replace(data: bytes, codec: str) -> str:
    try:
        if codec == "iso-2022-jp":
            text = _strict(data, codec)
            return text if text is not None else data.decode("iso2022_jp_2", "replace")
        return data.decode(codec, "replace")
    except (LookupError, ValueError):
        return data.decode("utf-8", "replace")


def decode_text(data: bytes, declared: str | None = None, *, guess: bool = True) -> tuple[str, str]:
    """Decode mail bytes to text; never raises.

    Args:
        data: The raw bytes of a text part or encoded word.
        declared: The charset label the sender declared, if any.
        guess: Whether the (costlier) byte-level guess may run; callers cap how often per message.

    Returns:
        (text, how) where `how` names the codec used, suffixed with "?" for a guess and "!" when replacement
        characters had to be inserted.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)) or not data:
        return "", "empty"
    data = bytes(data)
    codec = resolve_charset(declared)
    if codec and _carries_markers(data, codec):
        text = _strict(data, codec)
        if text is not None:
            return text, codec
        if codec.startswith(("utf-16", "utf-32")):
            # NULs or a BOM are proof enough: a stray odd byte (a newline appended by a gateway, a cut message)
            # costs one U+FFFD, where the guess below would reread the whole text as a legacy 8-bit charset.
            return _replace(data, codec), codec + "!"
    if JIS_MARK.search(data):  # a JIS escape never occurs in real UTF-8 or legacy 8-bit text
        text = _strict(data, "iso-2022-jp")
        if text is not None:
            return text, "iso-2022-jp?"
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        # Gmail converts from the declared single-byte charset even when the bytes were UTF-8 (and reads
        # unlabelled text as Windows-1252): undo that when the text re-encodes to valid UTF-8, however sparse.
        if not text.isascii() and (codec is None or single_byte(codec)):
            repaired = repair_utf8_mojibake(text, codec or "cp1252")
            if repaired is not None:
                return repaired, "utf-8?"
        # Gmail re-encoded legacy bytes labelled Latin-1/ASCII (or unlabelled) through Windows-1252: undo it.
        recovered = undo_mojibake(text) if guess and mojibake_candidate(text, declared) else None
        return (recovered[0], recovered[1] + "?") if recovered else (text, "utf-8")
    if codec and codec != "utf-8":
        text = _strict(data, codec)
        if text is not None:
            return _second_opinion(data, text, codec) if guess else (text, codec)
    utf8 = data.decode("utf-8", "replace")
    if _mostly_valid(utf8, data.count(b"\xef\xbf\xbd")):
        return utf8, "utf-8!"
    if codec and codec != "utf-8":
        text = _replace(data, codec)
        if text.count("\ufffd") <= len(text) // 500:  # a few bad bytes in otherwise valid declared text
            return text, codec + "!"
    guessed = guess_decode(data) if guess else None
    # A best guess that still reads as noise (control characters, rare symbols) means binary junk, such as
    # misaligned base64: replacement characters say so honestly, where a guess would invent Cyrillic.
    if guessed is not None and plausibility(guessed[0]) >= 0:
        return guessed[0], guessed[1] + "?"
    return _replace(data, codec or "utf-8"), (codec or "utf-8") + "!"


def mojibake_candidate(text: str, declared: str | None) -> bool:
    """Whether `decode_text` tries to undo Windows-1252 mojibake on this UTF-8 text (a costly guess: callers
    count it against their per-message guess budget)."""
    return not text.isascii() and resolve_charset(declared) in (None, "cp1252")


def _carries_markers(data: bytes, codec: str) -> bool:
    """Whether bytes show the marks of a declared charset that is not ASCII-compatible.

    ASCII bytes of ISO-2022-JP, UTF-7 or UTF-16 text also decode as UTF-8 (to the wrong text), so for these the
    declaration is tried first, but only when the bytes carry its escapes, NULs or BOM: otherwise Gmail has
    probably re-encoded the part to UTF-8 already.
    """
    name = codec.replace("-", "_")
    if name.startswith(("utf_16", "utf_32")):
        return b"\x00" in data or data[:2] in (b"\xff\xfe", b"\xfe\xff")
    if name == "utf_7":
        return b"+" in data and max(data) < 0x80
    if name == "hz":
        return b"~{" in data
    return name.startswith(("iso2022", "iso_2022")) and b"\x1b" in data


def decode_bytes(data: bytes, declared: str | None = None) -> str:
    """Decode mail bytes to text (see `decode_text`); never raises."""
    return decode_text(data, declared)[0]


def _mostly_valid(utf8: str, genuine_fffd: int) -> bool:
    # Truncated or lightly damaged UTF-8: nearly all multibyte sequences are valid, so replacing the few bad
    # ones beats reinterpreting everything in a guessed legacy charset.
    bad = utf8.count("\ufffd") - genuine_fffd
    good = len(utf8) - len(utf8.encode("ascii", "ignore")) - utf8.count("\ufffd")
    return bad > 0 and good >= 4 * bad


_HIGH_BYTES = bytes(range(0x80, 0x100))


def _high_ratio(data: bytes) -> bool:
    sample = data[:65536]
    return (len(sample) - len(sample.translate(None, _HIGH_BYTES))) * 5 > len(sample)


def _second_opinion(data: bytes, text: str, codec: str) -> tuple[str, str]:
    # A single-byte declaration always "succeeds"; when the bytes read far better in another codec (CJK or
    # Cyrillic text mislabelled as Latin-1, a common wrong declaration), prefer that confident guess.
    if codec not in ("cp1252", "cp1254", "cp874") and not codec.startswith(("iso8859", "latin")):
        return text, codec
    if not _high_ratio(data):
        return text, codec
    guessed = guess_decode(data, exclude=(codec,))
    if guessed is not None and plausibility(guessed[0]) > max(8.0, 2 * plausibility(text)):
        return guessed[0], guessed[1] + "?"
    return text, codec


# -- RFC 2047 encoded words --------------------------------------------------------------------------------

_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([BbQq])\?([^?]*)\?=")
_QP_HEX = re.compile(rb"=([0-9A-Fa-f]{2})")
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/_-]")


def lenient_b64(text: str) -> bytes:
    """Decode base64 or base64url, adding missing padding and skipping junk; never raises."""
    cleaned = _NOT_BASE64.sub("", text).replace("-", "+").replace("_", "/")
    cleaned = cleaned[: len(cleaned) - (len(cleaned) % 4 == 1)]  # a lone trailing sextet carries no byte
    try:
        # What base64.b64decode runs for ASCII text, without its argument checks (cleaned is ASCII).
        return binascii.a2b_base64(cleaned + "=" * (-len(cleaned) % 4))
    except (ValueError, TypeError):
        return b""


def _word_bytes(encoding: str, payload: str) -> bytes:
    if encoding in "Bb":
        return lenient_b64(payload)
    raw = payload.replace("_", " ").encode("utf-8", "surrogateescape")
    return _QP_HEX.sub(lambda m: bytes((int(m.group(1), 16),)), raw)


_SMUGGLED_BYTE = re.compile("[\udc80-\udcff]")  # a regex scan: a per-character generator cost ~0.7 ms per search


def decode_header_value(value: object) -> str:
    """Decode an RFC 2047 header value to one clean line; never raises.

    Handles B and Q words, encoded and plain words mixed, whitespace between adjacent encoded words (dropped),
    multibyte characters split across words (bytes joined before decoding), legacy charsets (same aliases as
    bodies), raw 8-bit values, and folded lines. Malformed words are left as they are, so they stay readable.

    Args:
        value: The header value as found in the message (non-strings give "").

    Returns:
        The decoded value with folding removed and runs of whitespace collapsed.
    """
    if not isinstance(value, str):
        return ""
    ascii_only = value.isascii()
    if ascii_only and "=?" not in value:  # most headers: nothing to decode (no word, no smuggled byte)
        # Printable ASCII holds none of _CONTROLS (nor tabs or newlines), so the scan for them is skipped.
        return " ".join((value if value.isprintable() else _CONTROLS.sub("", value)).split())
    if not ascii_only and _SMUGGLED_BYTE.search(value):  # raw 8-bit bytes smuggled through surrogateescape
        value = decode_bytes(value.encode("utf-8", "surrogateescape"))
    elif not ascii_only:
        # Text, not bytes: Gmail serves header values decoded (RFC 2047 words as text, raw 8-bit bytes read as
        # Latin-1). A "=?...?=" left in such a value is literal text, never decoded a second time; UTF-8 that
        # was read as a single-byte charset is repaired.
        return _repair_header(" ".join(_CONTROLS.sub("", value).split()))
    out: list[str] = []
    pending: list[tuple[str | None, bytes]] = []  # adjacent encoded words waiting to be joined
    pos = 0
    for match in _ENCODED_WORD.finditer(value):
        gap = value[pos : match.start()]
        if gap and not (pending and gap.isspace()):
            _flush(pending, out)
            out.append(gap)
        charset = match.group(1)
        chunk = _word_bytes(match.group(2), match.group(3))
        if pending and pending[-1][0] == charset.lower():
            pending[-1] = (pending[-1][0], pending[-1][1] + chunk)
        else:
            pending.append((charset.lower(), chunk))
        pos = match.end()
    _flush(pending, out)
    out.append(value[pos:])
    return " ".join(_CONTROLS.sub("", "".join(out)).split())


# Charsets a header's UTF-8 may have been read as before Gmail served it: the Latin-1 family first (8-bit header
# bytes, "iso-8859-1" words), then the common Cyrillic and Central European ones.
_HEADER_MOJIBAKE_CODECS = ("cp1252", "cp1251", "koi8_r", "iso8859_2", "cp1250")


def _repair_header(text: str) -> str:
    for codec in _HEADER_MOJIBAKE_CODECS:
        repaired = repair_utf8_mojibake(text, codec)
        if repaired is not None:
            return repaired
    recovered = undo_mojibake(text)  # GBK, Shift_JIS, cp1251... 8-bit header bytes Gmail read as Latin-1
    return recovered[0] if recovered else text


def _flush(pending: list[tuple[str | None, bytes]], out: list[str]) -> None:
    for charset, chunk in pending:
        out.append(decode_bytes(chunk, charset))
    pending.clear()


# -- RFC 2045/2231 parameters ------------------------------------------------------------------------------

_PARAM = re.compile(r"""\s*([^=;\s]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"?|[^;]*))?\s*(?:;|$)""", re.S)
_PCT = re.compile(rb"%([0-9A-Fa-f]{2})")


def parse_header_params(value: object) -> tuple[str, dict[str, str]]:
    """Split a Content-Type / Content-Disposition value into its main value and decoded parameters.

    RFC 2231 continuations (`name*0*=`, `name*1=`) and charsets (`utf-8''%E4%BD%A0`) are joined and decoded;
    RFC 2047 words inside quoted values (common in the wild) are decoded too. Never raises.

    Args:
        value: The header value.

    Returns:
        (main value lower-cased, {parameter name lower-cased: decoded value}).
    """
    if not isinstance(value, str):
        return "", {}
    main, _, rest = value.partition(";")
    plain: dict[str, str] = {}
    pieces: dict[str, dict[int, tuple[bool, str]]] = {}
    for match in _PARAM.finditer(rest):
        name, raw = match.group(1).lower(), (match.group(2) or "").strip()
        if raw.startswith('"'):
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1] if raw.endswith('"') and len(raw) > 1 else raw[1:])
        if "*" not in name:
            plain.setdefault(name, raw)
            continue
        base, _, tail = name.partition("*")
        encoded = tail.endswith("*") or tail == ""
        index = tail.rstrip("*")
        # isdecimal, not isdigit: int() rejects the superscript digits isdigit accepts ("filename*¹=x")
        pieces.setdefault(base, {}).setdefault(int(index) if index.isdecimal() else 0, (encoded, raw))
    params = {name: decode_header_value(raw) if "=?" in raw else raw for name, raw in plain.items()}
    for base, parts in pieces.items():
        params[base] = _join_rfc2231([parts[i] for i in sorted(parts)])
    return " ".join(main.split()).lower(), params


def _join_rfc2231(parts: list[tuple[bool, str]]) -> str:
    charset: str | None = None
    data = bytearray()
    for number, (encoded, raw) in enumerate(parts):
        if encoded:
            if number == 0 and raw.count("'") >= 2:
                charset, _, raw = raw.split("'", 2)
            data += _PCT.sub(lambda m: bytes((int(m.group(1), 16),)), raw.encode("utf-8", "surrogateescape"))
        else:
            data += raw.encode("utf-8", "surrogateescape")
    return " ".join(decode_bytes(bytes(data), charset or None).split())
