"""Bounding mail text for an LLM: clean-boundary slices. Pure.

`strip_quoted_reply` lives in `quotes.py`; it is re-exported here for callers of the old location.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from server.content.text.quotes import strip_quoted_reply

__all__ = ["BodySlice", "slice_body", "strip_quoted_reply"]


@dataclass(frozen=True)
class BodySlice:
    """One window of a body: `text` is `full[offset:offset + len(text)]`."""

    text: str
    offset: int
    total_chars: int
    truncated: bool  # more text after this slice
    next_offset: int | None


_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*\s|[。！？]")
_JOINERS = {"\u200d", "\ufe0f", "\ufe0e", "\u20e3"}


def slice_body(text: str, *, offset: int = 0, max_chars: int) -> BodySlice:
    """Cut `text[offset:]` to at most `max_chars` characters at a clean boundary.

    The cut is looked for in the last ~10% of the window, preferring a paragraph break, then a line break, then a
    sentence end, then a space; failing those it is a hard cut moved off combining marks, joiners, variation
    selectors and surrogate halves so no character cluster is split. `next_offset` is exactly where the slice
    ends, so concatenating successive slices reproduces the text with no loss and no overlap.

    Args:
        text: The full body text.
        offset: Where to start (clamped to [0, len(text)]).
        max_chars: The largest slice (values below 1 count as 1).

    Returns:
        The slice and the bookkeeping to continue from it.
    """
    text = text if isinstance(text, str) else ""
    total = len(text)
    start = min(max(int(offset), 0), total) if isinstance(offset, int) else 0
    limit = max(int(max_chars), 1) if isinstance(max_chars, int) else 1
    end = start + limit
    if end >= total:
        return BodySlice(text[start:], start, total, False, None)
    cut = _clean_cut(text, start, end, limit)
    return BodySlice(text[start:cut], start, total, True, cut)


def _clean_cut(text: str, start: int, end: int, limit: int) -> int:
    floor = max(start + 1, end - max(limit // 10, 1))
    for marker in ("\n\n", "\n"):
        found = text.rfind(marker, floor, end)
        if found >= 0:
            return found + len(marker)
    last_sentence = None
    for match in _SENTENCE_END.finditer(text, floor, end):
        last_sentence = match
    if last_sentence is not None:
        return last_sentence.end()
    space = max(text.rfind(" ", floor, end), text.rfind("\t", floor, end))
    if space >= 0:
        return space + 1
    cut = end
    for _ in range(32):  # a cluster is never this long in real text; past it, a hard cut is acceptable
        if cut <= start + 1 or not _inside_cluster(text, cut):
            break
        cut -= 1
    return cut if cut > start and not _inside_cluster(text, cut) else end


def _inside_cluster(text: str, cut: int) -> bool:
    after, before = text[cut], text[cut - 1]
    if unicodedata.combining(after) or after in _JOINERS or before == "\u200d":
        return True
    if "\U0001f3fb" <= after <= "\U0001f3ff":  # skin-tone modifier
        return True
    if "\udc00" <= after <= "\udfff" and "\ud800" <= before <= "\udbff":  # surrogate pair in a str
        return True
    if "\U0001f1e6" <= after <= "\U0001f1ff" and "\U0001f1e6" <= before <= "\U0001f1ff":
        # Regional indicators pair up into flags: cut only between pairs.
        run = 0
        while cut - run - 1 >= 0 and "\U0001f1e6" <= text[cut - run - 1] <= "\U0001f1ff":
            run += 1
        return run % 2 == 1
    return False
