"""The person's signature in a draft: added once, below their text and above the quoted original. Pure.

Gmail keeps a send-as identity's signature as HTML. The plain-text part gets it converted to text (the same
HTML-to-text the read tools use) after the usual `-- ` separator line (RFC 3676); the HTML alternative keeps it
as HTML in Gmail's own `gmail_signature` markup, so Gmail shows and folds it as its own. Both markers are what
`split_signature` finds again, so an edited draft has its signature replaced, never doubled. A text that
already ends with the signature (the model wrote it in) does not get it a second time.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from server.content.text.html_text import html_to_text

TEXT_SEPARATOR = "-- "
HTML_MARKER = '<br><br><span class="gmail_signature_prefix">-- </span><br>'
_LINK_SUFFIX = re.compile(r" \((?:https?://|mailto:)[^()\s]*\)")
_IMAGE = re.compile(r"<img\b", re.I)
_HTML_OPEN = '<div dir="ltr" class="gmail_signature" data-smartmail="gmail_signature">'


@dataclass(frozen=True)
class Signature:
    text: str
    html: str

    @classmethod
    def from_html(cls, markup: str) -> Signature | None:
        """The signature of a send-as identity, or None when it has none (only blanks and markup). A signature
        that is only an image (a logo without alt text) has no text: it goes into the HTML alternative only."""
        text = html_to_text(markup).strip() if markup else ""
        if not text and not _IMAGE.search(markup or ""):
            return None
        return cls(text=text.replace("\r\n", "\n"), html=markup)

    @property
    def text_block(self) -> str:
        return f"\n\n{TEXT_SEPARATOR}\n{self.text}" if self.text else ""

    @property
    def html_block(self) -> str:
        return f"{HTML_MARKER}{_HTML_OPEN}{self.html}</div>"


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def ends_with(own_text: str, signature: Signature) -> bool:
    """Whether the text already ends with the signature (blanks aside, and with or without the addresses of its
    links, which the text form adds in brackets): it must not be added again."""
    if not signature.text:
        return False  # an image-only signature: nothing in the text to find
    own = _squeezed(own_text)
    return any(own.endswith(_squeezed(form)) for form in (signature.text, _LINK_SUFFIX.sub("", signature.text)))


def plain_to_html(text: str) -> str:
    """Plain text as HTML that shows the same lines (for an HTML alternative made only to carry a signature)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "<br>\n".join(html.escape(line) for line in text.split("\n"))


def split_signature(own_text: str, own_html: str | None) -> tuple[str, str | None, bool]:
    """(text, HTML, whether a signature was found) of a body this module signed, with the signature taken off.

    The text's signature starts at its last `-- ` separator line; the HTML's at the marker `html_block` writes.
    """
    found = False
    start = own_text.rfind(f"\n{TEXT_SEPARATOR}\n")
    if start >= 0:
        own_text, found = own_text[:start].rstrip("\n"), True
    elif own_text.startswith(f"{TEXT_SEPARATOR}\n"):
        own_text, found = "", True
    if own_html is not None:
        marker = own_html.rfind(HTML_MARKER)
        if marker >= 0:
            own_html, found = own_html[:marker], True
    return own_text, own_html, found


def signed(
    own_text: str, own_html: str | None, signature: Signature | None, *, plain_quote: str = "", html_quote: str = ""
) -> tuple[str, str | None]:
    """The body's (text, HTML) with the signature between the person's text and the quote.

    With a signature and no HTML of the person's, the HTML alternative is made from the text so the signature
    keeps its formatting there; without a signature the HTML stays as given (None stays None). A text that
    already ends with the signature is left as it is.
    """
    if signature is None or ends_with(own_text, signature):
        if own_html is None:
            return own_text + plain_quote, None
        return own_text + plain_quote, own_html + html_quote
    text = own_text.rstrip("\n") + signature.text_block + (plain_quote if plain_quote else "\n")
    body_html = own_html if own_html is not None else plain_to_html(own_text.rstrip("\n"))
    quote_html = html_quote if html_quote or not plain_quote else "<br>" + plain_to_html(plain_quote)
    return text, body_html + signature.html_block + quote_html
