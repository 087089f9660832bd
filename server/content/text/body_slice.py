"""Bounding mail text for an LLM: clean-boundary slices and optional removal of quoted reply history. Pure."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


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


# -- quoted replies --------------------------------------------------------------------------------------------

_ATTRIBUTION = re.compile(
    r"^\s*(?:"
    r"On\b.{0,300}\bwrote\s*:"  # English (Gmail, Apple Mail, Thunderbird)
    r"|.{0,300}(?:写道|寫道)\s*[:：]"  # Chinese Gmail: "张三 <a@b> 于2024年1月1日周一 写道："
    r"|\d{4}年\d{1,2}月\d{1,2}日.{0,300}[:：]"  # Japanese Gmail: "2024年1月1日(月) 10:00 山田 <a@b>:"
    r"|.{0,300}님이\s*작성\s*[:：]?"  # Korean Gmail
    r"|Le\b.{0,300}\ba\s+écrit\s*:"  # French
    r"|Am\b.{0,300}\bschrieb\b[^:]{0,200}:"  # German
    r"|El\b.{0,300}\bescribió\s*:"  # Spanish
    r"|Il\b.{0,300}\bha\s+scritto\s*:"  # Italian
    r"|Em\b.{0,300}\bescreveu\s*:"  # Portuguese
    r"|Op\b.{0,300}\bschreef\b[^:]{0,200}:"  # Dutch
    r"|.{0,300}\bнаписал[аи]?(?:\(а\))?\s*:"  # Russian
    r")\s*$",
    re.I,
)
_SEPARATOR = re.compile(
    r"^\s*(?:-{2,}\s*(?:Original Message|Ursprüngliche Nachricht|Message d'origine|Mensaje original|"
    r"Messaggio originale|Oorspronkelijk bericht|原始邮件|原始郵件|元のメッセージ)\s*-{2,}"
    r"|_{20,})\s*$",
    re.I,
)
_FORWARD = re.compile(r"^\s*(?:-{3,}\s*Forwarded message\s*-{3,}|Begin forwarded message:)\s*$", re.I)
_OUTLOOK_FROM = re.compile(r"^\s*\*?(?:From|Von|De|Da|Van|发件人|寄件者|差出人)\s*\*?\s*[:：]", re.I)


def strip_quoted_reply(text: str) -> str:
    """Drop quoted reply history: attribution blocks ("On ... wrote:" and localized forms, "-----Original
    Message-----", Outlook header blocks) with everything after them, and trailing ">" lines.

    Interleaved replies (new text between quoted lines after the attribution) keep their new text: only the
    quoted lines are dropped there. If stripping would leave nothing, the text is returned unchanged.

    Args:
        text: The body text.

    Returns:
        The text without its quoted history.
    """
    if not isinstance(text, str) or not text:
        return "" if not isinstance(text, str) else text
    lines = text.split("\n")
    cut = _attribution_index(lines)
    if cut is not None:
        after = lines[cut:]
        quoted_seen = interleaved = False
        for line in after[1:]:
            if line.lstrip().startswith(">"):
                quoted_seen = True
            elif quoted_seen and line.strip():
                interleaved = True
                break
        lines = lines[:cut] if not interleaved else [ln for ln in lines if not ln.lstrip().startswith(">")]
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith(">")):
        lines.pop()
    result = "\n".join(lines).rstrip()
    return result if result.strip() else text


def _attribution_index(lines: list[str]) -> int | None:
    forward_until = -1  # the header block of a forwarded message looks like Outlook's, but it is content
    for index, line in enumerate(lines):
        if len(line) > 600:
            continue
        if _FORWARD.match(line):
            forward_until = index + 8
            continue
        if _SEPARATOR.match(line):
            return index
        # Every attribution ends with a colon (Korean "작성" may not): a cheap filter before the regex.
        if (line.rstrip().endswith((":", "：")) or "작성" in line) and _ATTRIBUTION.match(line):
            return index
        # Gmail wraps long attributions over two or three lines: "On Mon, ... <\nann@example.com> wrote:".
        if line.lstrip().startswith(("On ", "Le ", "Am ", "El ", "Il ", "Em ", "Op ")):
            for width in (2, 3):
                candidate = " ".join(part.strip() for part in lines[index : index + width])
                if index + width <= len(lines) and candidate.endswith((":", "：")) and _ATTRIBUTION.match(candidate):
                    return index
        if index > forward_until and _OUTLOOK_FROM.match(line) and _outlook_block(lines, index):
            return index
    return None


def _outlook_block(lines: list[str], index: int) -> bool:
    # Outlook's reply header: "From: ..." then within a few lines "Sent:/Date:" and "Subject:".
    window = [line.strip().lstrip("*").lower() for line in lines[index + 1 : index + 6]]
    has_date = any(
        line.startswith(("sent:", "date:", "gesendet:", "envoyé :", "envoyé:", "发送时间", "日付")) for line in window
    )
    has_subject = any(line.startswith(("subject:", "betreff:", "objet :", "objet:", "主题", "件名")) for line in window)
    return has_date and has_subject
