"""The last cleaning step of every body text, plain or converted from HTML. Pure, linear time, never raises."""

from __future__ import annotations

import re

# Soft hyphen, combining grapheme joiner, fillers, zero-width space, word joiners, BOM: padding, not text.
_INVISIBLE_CHARS = "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u2060\u2061\u2062\u2063\u2064\ufeff"
_INVISIBLE_CHARS += "\u3164\uffa0"
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]")
_ZW_RUN = re.compile("(?:[\u200c\u200d][ \t\u00a0\u2007]*){2,}")  # preheader padding: "&zwnj;&nbsp;" repeated
_BLANK_RUN = re.compile(r"\n{3,}")
_CONTROL = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_END_WS = " \t\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u3000"


def tidy_text(text: str) -> str:
    """Normalize extracted mail text: newlines, invisible padding, trailing spaces, at most one blank line.

    Args:
        text: Text from a plain-text part or from `html_to_text`.

    Returns:
        The cleaned text, stripped at both ends. Spacing inside lines is kept (plain-text tables stay aligned).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    # Other C0 controls are never text either (junk from broken encodings, shown to the model as \u00XX escapes);
    # vertical tab and form feed were line breaks.
    if _CONTROL.search(text):
        text = _CONTROL.sub(lambda m: "\n" if m.group() in "\x0b\x0c" else "", text)
    # Substring probes first: they are C-speed scans, the regexes are not, and most text needs neither.
    if any(ch in text for ch in _INVISIBLE_CHARS):
        text = _INVISIBLE.sub("", text)
    if "\u200c" in text or "\u200d" in text:
        text = _ZW_RUN.sub(" ", text)
    # Per-line rstrip rather than a regex: "[ ]+\n" backtracks quadratically on long runs of spaces.
    text = "\n".join(line.rstrip(_LINE_END_WS) for line in text.split("\n"))
    return (_BLANK_RUN.sub("\n\n", text) if "\n\n\n" in text else text).strip()
