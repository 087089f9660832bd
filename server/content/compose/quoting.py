"""The original message quoted under a reply, or set out under a forward, in plain text and HTML. Pure.

Replies quote as every mail client does: an attribution line (`On <date>, <sender> wrote:`) and the original's
lines prefixed with `> `. Forwards carry Gmail's block (`---------- Forwarded message ---------` and the
original's From, Date, Subject, To, Cc) and the text unquoted. The HTML alternative wraps the same text,
escaped, in Gmail's `gmail_quote` markup, so Gmail folds it like its own quotes. Both markers are what
`split_quote` finds again when a draft's body is replaced and its quote should stay.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

FORWARD_MARKER = "---------- Forwarded message ---------"
HTML_QUOTE_CLASS = "gmail_quote"
MAX_QUOTED_CHARS = 100_000  # a quote longer than this is cut (Gmail's own clipping starts at ~100 kB)
_CUT_NOTE = "[quoted text cut: the original is longer]"


@dataclass(frozen=True)
class QuoteSource:
    """What is quoted: the original's sender, date, subject, recipients (display strings) and its text."""

    sender: str
    date: str
    subject: str
    to: str
    cc: str
    text: str


@dataclass(frozen=True)
class Quote:
    text: str  # appended to the plain-text body, starting with a blank line
    html: str  # appended to the HTML body


def _bounded(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").rstrip()
    if len(text) > MAX_QUOTED_CHARS:
        return text[:MAX_QUOTED_CHARS].rstrip() + "\n" + _CUT_NOTE
    return text


def attribution(source: QuoteSource) -> str:
    who = source.sender or "the sender"
    return f"On {source.date}, {who} wrote:" if source.date else f"{who} wrote:"


def reply_quote(source: QuoteSource) -> Quote:
    lines = _bounded(source.text).split("\n")
    quoted = "\n".join(">" if not line else ("> " + line if not line.startswith(">") else ">" + line) for line in lines)
    head = attribution(source)
    body_html = "<br>\n".join(html.escape(line) for line in _bounded(source.text).split("\n"))
    return Quote(
        text=f"\n\n{head}\n\n{quoted}\n",
        html=(
            f'<br><div class="{HTML_QUOTE_CLASS}"><div class="gmail_attr">{html.escape(head)}<br></div>'
            '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid '
            f'rgb(204,204,204);padding-left:1ex">{body_html}</blockquote></div>'
        ),
    )


def forward_quote(source: QuoteSource) -> Quote:
    fields = [("From", source.sender), ("Date", source.date), ("Subject", source.subject), ("To", source.to)]
    if source.cc:
        fields.append(("Cc", source.cc))
    head_lines = [FORWARD_MARKER, *(f"{name}: {value}" for name, value in fields)]
    text = _bounded(source.text)
    head_html = "<br>\n".join(html.escape(line) for line in head_lines)
    body_html = "<br>\n".join(html.escape(line) for line in text.split("\n"))
    return Quote(
        text="\n\n" + "\n".join(head_lines) + "\n\n" + text + "\n",
        html=f'<br><div class="{HTML_QUOTE_CLASS}">{head_html}<br><br>\n{body_html}</div>',
    )


def split_quote(text: str, html_text: str | None = None) -> tuple[str, str, str]:
    """(own text, plain quote, HTML quote) of a body this module built; no quote found: (text, "", "").

    The plain quote starts at the forward marker, or at the last attribution line (after a blank line) whose
    next non-blank line is quoted with `>`. The HTML quote is the `gmail_quote` block this module appends last.
    """
    plain_quote = ""
    marker = text.find("\n\n" + FORWARD_MARKER + "\n")
    if marker >= 0:
        plain_quote = text[marker:]
    else:
        lines = text.split("\n")
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line) + 1)
        for index in range(len(lines) - 1, 0, -1):
            if not (lines[index].endswith(" wrote:") and lines[index - 1] == ""):
                continue
            following = next((line for line in lines[index + 1 :] if line), "")
            if following.startswith(">"):
                plain_quote = text[offsets[index - 1] - 1 :]  # from the newline before the blank line
                break
    own = text[: len(text) - len(plain_quote)] if plain_quote else text
    html_quote = ""
    if html_text:
        found = html_text.find(f'<br><div class="{HTML_QUOTE_CLASS}">')
        html_quote = html_text[found:] if found >= 0 else ""
    return own, plain_quote, html_quote
