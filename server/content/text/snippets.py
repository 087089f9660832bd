"""Gmail snippets made fit for a result line: invisible padding removed, whitespace collapsed, length capped.

Newsletters pad their preheader with runs of zero-width and invisible characters ("&zwnj;&nbsp;" repeated) so
mail apps show no body text after it; Gmail's snippet keeps them, and they cost the model bytes and tokens for
nothing. Pure functions; the tools layer applies them to search results and to `gmail_get_message` snippets.
"""

from __future__ import annotations

import re

SNIPPET_CHARS = 120  # Gmail sends ~200; 120 tell what a message is about (gmail_get_message has it all)

# Never visible in a one-line preview: zero-width space, word joiner, BOM, combining grapheme joiner, soft hyphen,
# invisible operators, Hangul fillers and other padding characters mail templates use.
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u2060-\u2064\ufeff\u3164\uffa0]")
# ZWNJ / ZWJ are real characters between letters (Persian, Indic scripts, emoji sequences), padding elsewhere: a
# run of two or more, or one at either end or next to whitespace, becomes a space; one between two visible
# characters stays. One pattern, no per-run callback (a padded preheader holds dozens of runs); it opens with a
# joiner so the regex engine skips to the next one. `(?<!\S.)` after the first joiner: nothing visible before it.
_PADDING_JOINERS = re.compile(r"[\u200c\u200d](?:[\u200c\u200d]+|(?<!\S.)|(?!\S))")


def clean_snippet(text: str | None, max_chars: int = SNIPPET_CHARS) -> str | None:
    """A snippet without invisible padding, on one line, cut at a word boundary near `max_chars`.

    Args:
        text: The snippet, HTML entities already unescaped.
        max_chars: Longest result before the ellipsis.

    Returns:
        The cleaned snippet, or None when nothing visible is left.

    >>> clean_snippet("Rust lands. \\u200c\\u00a0\\u200c\\u00a0\\u200c The Weekly Byte")
    'Rust lands. The Weekly Byte'
    """
    if not text:
        return None
    if not text.isascii():  # every invisible character and joiner is outside ASCII
        text = _INVISIBLE.sub("", text)
        if "\u200c" in text or "\u200d" in text:
            text = _PADDING_JOINERS.sub(" ", text)
    text = " ".join(text.split())  # str.split's whitespace is exactly `\s` (also NBSP, U+2007, U+3000)
    if len(text) > max_chars:
        cut = text[:max_chars]
        word_end = cut.rfind(" ")
        if word_end > max_chars * 3 // 4:  # scripts without spaces (CJK) are cut mid-run instead
            cut = cut[:word_end]
        text = cut.rstrip(" ,;:.-") + "…"
    return text or None
