"""Quoted history recognised by content: a reply's trailing block made of what earlier messages already said.

`strip_quoted_reply` finds quoted history by its markers (attributions, `>` prefixes, Outlook header blocks).
Inside a thread there is a surer sign: the earlier messages themselves. A tail of a reply whose lines repeat
what the thread already holds is history, whatever language or mail program introduced it; the tail is dropped
with the attribution-like line just above it. Only a tail is ever cut, so an interleaved answer (new lines
between quoted ones) keeps its new lines.

Lines are compared by their runs of words (4-grams), not as whole lines: quoting programs re-wrap text, so a
quoted line rarely equals an original line, but its words still run in the same order. Han, kana and hangul
count one character as one word (those scripts put no spaces between words). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

GRAM = 4
LINE_SHARE = 0.75  # share of a line's word runs seen earlier for the line to count as repeated
MIN_LONE_TOKENS = 8  # a tail of one repeated line is cut only when the line is at least this long
# Bounds, so hostile bodies cost bounded time and memory: longer texts are left to the marker stripper alone, and
# the word runs of a whole thread are remembered as hashes, up to MAX_REMEMBERED.
MAX_LINES = 5_000
MAX_TEXT_CHARS = 300_000
MAX_TOKENS = 50_000  # per message
MAX_REMEMBERED = 400_000
_QUOTE_MARKS = re.compile(r"^[\s>|]+")
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"  # kana, Han, hangul: one character, one word
_TOKEN = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
_LEAD_IN = re.compile(r"^.{0,300}[:：]\s*$")  # an attribution line ends with a colon in every language
_RULE = re.compile(r"^\s*(?:[-_=*]\s*){5,}$")


def tokens(text: str) -> list[str]:
    """Words (and single CJK characters) of `text` without quote marks, case-folded."""
    return [match.casefold() for match in _TOKEN.findall(_QUOTE_MARKS.sub("", text))]


def _grams(words: list[str]) -> list[int]:
    return [hash(tuple(words[i : i + GRAM])) for i in range(len(words) - GRAM + 1)]


def remember(text: str, seen: set[int]) -> None:
    """Adds the word runs of `text` (across line breaks) to `seen`, while it holds fewer than MAX_REMEMBERED."""
    if len(seen) >= MAX_REMEMBERED:
        return
    words: list[str] = []
    for line in text[:MAX_TEXT_CHARS].split("\n")[:MAX_LINES]:
        words.extend(tokens(line))
        if len(words) >= MAX_TOKENS:
            break
    seen.update(_grams(words[:MAX_TOKENS]))


def _line_state(line: str, seen: set[int]) -> tuple[int, bool] | None:
    """(tokens, repeated) for a line with enough words to judge; None for short lines (neutral)."""
    words = tokens(line)
    grams = _grams(words)
    if not grams:
        return None
    hits = sum(gram in seen for gram in grams)
    return len(words), hits >= LINE_SHARE * len(grams)


def drop_repeated_tail(text: str, seen: set[int]) -> str:
    """`text` without its trailing block of lines whose words `seen` already holds (and the lead-in above it)."""
    if len(text) > MAX_TEXT_CHARS or not seen:
        return text
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        return text
    states = [_line_state(line, seen) for line in lines]
    judged = [index for index, state in enumerate(states) if state is not None]
    cut: int | None = None
    repeated = total = 0
    for position in range(len(judged) - 1, -1, -1):
        index = judged[position]
        size, is_repeated = states[index]  # type: ignore[misc]  # `judged` holds only indexes whose state is not None
        total += 1
        repeated += is_repeated
        if not is_repeated:
            continue
        following = judged[position + 1] if position + 1 < len(judged) else None
        next_repeated = following is None or states[following][1]  # type: ignore[index]  # a judged index: not None
        enough = repeated >= 2 or size >= MIN_LONE_TOKENS
        if next_repeated and enough and repeated >= 0.8 * total:
            cut = index
    if cut is None:
        return text
    cut = _with_lead_in(lines, cut)
    kept = "\n".join(lines[:cut]).rstrip()
    return kept if kept.strip() else text


def _with_lead_in(lines: list[str], cut: int) -> int:
    """Moves the cut above the attribution or rule lines that introduce the quoted block."""
    above = cut - 1
    while above >= 0:
        if not lines[above].strip():
            above -= 1
        elif _LEAD_IN.match(lines[above]) or _RULE.match(lines[above]):
            cut, above = above, above - 1
        else:
            break
    return cut


def drop_dangling_lead_in(original: str, stripped: str) -> str:
    """`stripped` without a last line that introduces the quoted lines the stripper removed after it.

    A marker-based stripper drops trailing `>` lines even under an attribution it does not recognise (an unusual
    wording or language); the attribution is then left hanging at the end. A line ending in a colon that the
    original follows with `>` lines is such a lead-in, whatever its words.
    """
    if not stripped or not original.startswith(stripped):
        return stripped
    rest = original[len(stripped) :].lstrip("\r\n \t")
    if not rest.startswith(">"):
        return stripped
    head, _, last = stripped.rpartition("\n")
    if not _LEAD_IN.match(last) or not head.strip():
        return stripped
    return head.rstrip()


def own_words(texts: Sequence[str], strip: Callable[[str], str]) -> list[str]:
    """Each message's own words, in thread order: marker-based stripping, then the repeated tail removed.

    Args:
        texts: The messages' body texts, oldest first.
        strip: The marker-based quote stripper (`strip_quoted_reply`).

    Returns:
        Each text without its quoted history, in order.
    """
    seen: set[int] = set()
    result: list[str] = []
    for text in texts:
        stripped = drop_repeated_tail(drop_dangling_lead_in(text, strip(text)), seen)
        remember(stripped, seen)
        result.append(stripped)
    return result
