"""HTML mail -> readable plain text for an LLM, in linear time, without recursion or dependencies.

Why not `html.parser.HTMLParser`: it has had repeated worst-case quadratic bugs on malformed input (cpython
gh-135462 / CVE-2025-6069, gh-153030 / CVE-2026-15308), fixed only in recent patch releases; on this venv's
3.11.7, 0.4 MB of "<a" takes ~80 s. Mail HTML is hostile and users run whatever Python 3.10+ they have.
So the tokenizer below is a small regex scanner in which every step moves forward (an unterminated tag or
comment runs to the end of input, as in browsers), with the stdlib's `html.unescape` for entities. Open elements
live on a list, never on the call stack, so nesting depth costs nothing.

Output: no tags, CSS, scripts or head; block elements become line breaks; <li> becomes "- " (or "1. ");
table rows become "cell | cell" (layout tables whose cells hold paragraphs stay as plain blocks); links are kept
as "text (url)" when the URL adds something; images become their alt text; tracking pixels and hidden elements
(including preheaders) are dropped; whitespace is collapsed, with at most one blank line in a row.

Text a person would not see (`html_visibility.py`, with `<style>` rules from `html_css.py`) is left out and
collected for the security checks; with `include_hidden` it stays in place between `[hidden]` and `[/hidden]`.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from server.content.text.html_css import StyleSheet, declarations
from server.content.text.html_links import link_host, link_suffix
from server.content.text.html_output import HIDDEN_OPEN, Buffer, TextOutput, flatten
from server.content.text.html_visibility import (
    PAGE,
    HiddenCollector,
    HiddenSegment,
    Look,
    hidden_reason,
    is_pixel,
    next_look,
    parse_attrs,
    soft_reason,
)
from server.content.text.tidy import tidy_text

_TAG = re.compile(r"""<(/?)([A-Za-z][^\s/>]*)((?:[^>"'=]+|=\s*"[^"]*"?|=\s*'[^']*'?|["'=])*)>?""")
_ATTR = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"?|'([^']*)'?|([^\s>]*)))?""")
# Elements whose content is raw text: skipped wholesale up to their end tag (none of it is readable mail text).
_RAWTEXT = ("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript")
_RAW_END = {name: re.compile(rf"</{name}(?=[\s/>]|$)", re.I) for name in _RAWTEXT}


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


_VOID = _names("area base basefont bgsound br col embed hr image img input keygen link meta param source track wbr")
_SKIP = _names("head svg math template select object applet audio video canvas map datalist")
_HEAD_CONTENT = _names("title meta link style script base noscript template")
_PARA = _names("p h1 h2 h3 h4 h5 h6 blockquote pre hr figure address fieldset")
_BLOCK = _names(
    "div section article header footer nav aside main center li dt dd tr caption figcaption form "
    "details summary table dl ul ol legend option body html"
)
_CLOSES_P = _PARA | (_BLOCK - {"body", "html", "caption", "option", "summary"})
# Start tags that close an open sibling, as browsers do: name -> (what it closes, where the search stops).
_IMPLIED = {
    "li": ({"li"}, {"ul", "ol", "table", "td", "th"}),
    **dict.fromkeys(("td", "th"), ({"td", "th"}, {"tr", "table"})),
    "tr": ({"tr"}, {"table"}),
    **dict.fromkeys(("thead", "tbody", "tfoot"), ({"thead", "tbody", "tfoot"}, {"table"})),
    **dict.fromkeys(("dt", "dd"), ({"dt", "dd"}, {"dl"})),
    "option": ({"option"}, {"select", "datalist"}),
    "a": ({"a"}, {"table", "td", "th"}),
}
_SCAN = 16  # implied-close searches look this far down the stack: bounded work per tag
_MAX_ROW_NESTING = 8  # deeper table rows are laid out as plain blocks, so cell text is copied at most 8 times
_MAX_LINK_PARTS = 64  # longer "link text" is not a link label; skipping it keeps link closing O(1)
_WS = re.compile(r"[ \t\n\r\f\u00a0]+")
_MAX_LINK_HOSTS = 200

HIDDEN, BLOCK, PARA, CELL, ROW, TABLE, LINK, LIST, PRE, QUOTE, SILENT, STYLED, SHOWN = (1 << i for i in range(13))


@dataclass(frozen=True)
class HtmlText:
    """The readable text of an HTML body, the text hidden from its reader, and the hosts its links point to."""

    text: str
    hidden: tuple[HiddenSegment, ...]
    hidden_chars: int
    link_hosts: tuple[str, ...]


class _Converter(TextOutput):
    def __init__(self, include_hidden: bool = False) -> None:
        self.include_hidden = include_hidden
        self.sheet = StyleSheet()
        self.looks: list[Look] = [PAGE]
        self.collector = HiddenCollector()
        self.link_hosts: dict[str, None] = {}
        self.visible_chars = 0
        self.silent = 0  # inside script, svg, head...: not text at all
        self.shown = 0  # inside a hidden element whose text is kept, marked (include_hidden)
        self.stack: list[tuple[str, int]] = []
        self.open: dict[str, int] = {}
        super().__init__()
        self.links: list[tuple[str, Buffer, int]] = []
        self.lists: list[list[int]] = []  # [ordered, counter]
        self.hidden = 0
        self.pre = 0

    # -- tokenizer ---------------------------------------------------------------------------------------------
    def run(self, doc: str) -> None:
        find, size = doc.find, len(doc)
        pos = text_start = 0
        while True:
            lt = find("<", pos)
            if lt < 0:
                break
            nxt = doc[lt + 1 : lt + 2]
            closing_tag = nxt == "/"
            first = doc[lt + 2 : lt + 3] if closing_tag else nxt
            match = _TAG.match(doc, lt) if first.isascii() and first.isalpha() else None  # matches whenever tried
            if match:
                self.text(doc[text_start:lt])
                name, pos = match.group(2).lower(), match.end()
                if closing_tag:
                    self.end(name)
                else:
                    self.start(name, match.group(3))
                    if name in _RAW_END:  # skip raw text to its end tag (or to the end of input)
                        end = _RAW_END[name].search(doc, pos)
                        if name == "style":
                            self.sheet.add(doc[pos : end.start() if end else size])
                        end_tag = _TAG.match(doc, end.start()) if end else None
                        pos = end_tag.end() if end_tag else size
                        self.end(name)
            elif nxt in ("!", "?", "/"):
                self.text(doc[text_start:lt])
                if doc.startswith("<!--", lt):
                    short = 5 if doc.startswith("<!-->", lt) else 6 if doc.startswith("<!--->", lt) else 0
                    close = find("-->", lt + 4)
                    pos = lt + short if short else size if close < 0 else close + 3
                else:  # doctype, CDATA, processing instruction, "</>" or "</3": bogus comment to ">"
                    close = find(">", lt + 2)
                    pos = size if close < 0 else close + 1
            else:  # a literal "<" in text
                pos = lt + 1
                continue
            text_start = pos
        self.text(doc[text_start:])

    # -- elements ----------------------------------------------------------------------------------------------
    def start(self, name: str, attr_src: str) -> None:
        attrs = parse_attrs(attr_src, _ATTR) if attr_src.strip() else {}
        self._implied_closes(name)
        if name == "a" and attrs.get("href") and len(self.link_hosts) < _MAX_LINK_HOSTS:
            host = link_host(attrs["href"])
            if host:
                self.link_hosts[host] = None
        if self.silent or self.hidden:
            if name in _VOID:
                return
            flags = SILENT if name in _SKIP or name in _RAWTEXT else 0
            self.silent += flags == SILENT
            self.collector.separate()
            self.stack.append((name, flags))
            self.open[name] = self.open.get(name, 0) + 1
            return
        decls = declarations(attrs.get("style")) if attrs else {}
        if self.sheet.applies(name, attrs):
            decls = {**self.sheet.matching(name, attrs), **decls}
        if name in _VOID:
            if not hidden_reason(decls, attrs) or self.include_hidden:
                self._void(name, attrs, decls)
            return
        flags = 0
        reason = hidden_reason(decls, attrs) if decls or attrs else None
        if name in _SKIP or name in _RAWTEXT:
            flags = SILENT
            self.silent += 1
        elif reason and not self.include_hidden:
            flags = HIDDEN
            self.hidden += 1
            self.collector.begin(reason, self.visible_chars, self.sheet.is_toggled(attrs))
        else:
            if reason:
                if not self.shown:
                    self.collector.begin(reason, self.visible_chars, self.sheet.is_toggled(attrs))
                flags, self.shown = SHOWN, self.shown + 1
            look = next_look(self.looks[-1], name, decls, attrs, len(self.stack) + 1) if decls or attrs else None
            if look is not None and look is not self.looks[-1]:
                self.looks.append(look)
                flags |= STYLED
            flags |= self._open_element(name, attrs)
        self.stack.append((name, flags))
        self.open[name] = self.open.get(name, 0) + 1

    def end(self, name: str) -> None:
        if name == "br":  # browsers read </br> as <br>
            self.start("br", "")
        elif self.open.get(name):
            while self.stack and self._pop() != name:
                pass
        elif name == "p" and not (self.hidden or self.silent):
            self._break(2)

    def _implied_closes(self, name: str) -> None:
        if self.open.get("head") and name not in _HEAD_CONTENT:
            self.end("head")  # a body element (or no </head> at all) ends the head
        if name in _CLOSES_P and self.stack and self.stack[-1][0] == "p":
            self._pop()
        rule = _IMPLIED.get(name)
        if rule and any(self.open.get(target) for target in rule[0]):
            targets, stops = rule
            for index in range(len(self.stack) - 1, max(-1, len(self.stack) - 1 - _SCAN), -1):
                entry = self.stack[index][0]
                if entry in targets:
                    while len(self.stack) > index:
                        self._pop()
                    break
                if entry in stops:
                    break

    def _open_element(self, name: str, attrs: dict[str, str]) -> int:
        flags = PARA if name in _PARA else BLOCK if name in _BLOCK else 0
        if name in ("ul", "ol") and self.lists:
            flags = BLOCK  # nested lists: no blank lines inside the outer list
        if flags:
            self._break(2 if flags == PARA else 1)
        if name == "li":
            depth = min(max(len(self.lists), 1), 6)  # capped: indentation must not grow with hostile nesting
            if self.lists and self.lists[-1][0]:
                self.lists[-1][1] += 1
                self.bufs[-1].marker = "  " * (depth - 1) + f"{self.lists[-1][1]}. "
            else:
                self.bufs[-1].marker = "  " * (depth - 1) + "- "
        elif name in ("ul", "ol"):
            start = attrs.get("start", "")
            self.lists.append([name == "ol", int(start) - 1 if start.isdecimal() and len(start) < 9 else 0])
            flags |= LIST
        elif name == "table":
            self.rows.append(None)
            flags |= TABLE
        elif name == "tr" and self.row_depth < _MAX_ROW_NESTING:
            self.rows.append([])
            self.row_depth += 1
            flags = ROW
        elif name in ("td", "th"):
            if self.rows and self.rows[-1] is not None:
                self.bufs.append(Buffer())
                return CELL
            flags = BLOCK
            self._break(1)
        elif name == "a" and attrs.get("href"):
            buf = self.bufs[-1]
            self.links.append((attrs["href"], buf, len(buf.parts)))
            flags |= LINK
        elif name == "pre":
            self.pre += 1
            flags |= PRE
        elif name == "blockquote":
            self.quote += 1
            flags |= QUOTE
        return flags

    def _pop(self) -> str:
        name, flags = self.stack.pop()
        self.open[name] -= 1
        if flags & SILENT:
            self.silent -= 1
            return name
        if flags & HIDDEN:
            self.hidden -= 1
            self.collector.end()
            return name
        if self.hidden:
            self.collector.separate()
            return name
        if flags & STYLED:
            self.looks.pop()
        if flags & SHOWN:
            self.shown -= 1
            if not self.shown:
                self.collector.end()
        if flags & LINK:
            self._close_link()
        if flags & CELL:
            self._unmark(self.bufs[-1])
            cell = self.bufs.pop()
            row = self.rows[-1] if self.rows else None
            if row is not None:
                row.append(flatten(cell))
        if flags & ROW:
            self._close_row()
        if flags & TABLE:
            while self.rows and self.rows.pop() is not None:
                pass
        if flags & LIST:
            self.lists.pop()
        if flags & PRE:
            self.pre -= 1
        if flags & QUOTE:
            self.quote -= 1
        if flags & (PARA | BLOCK):
            self._break(2 if flags & PARA else 1)
        return name

    def _close_link(self) -> None:
        href, buf, index = self.links.pop()
        if buf is not self.bufs[-1] or not 0 < len(buf.parts) - index <= _MAX_LINK_PARTS:
            return
        suffix = link_suffix(href, "".join(buf.parts[index:]).strip())
        if suffix:
            buf.parts[-1] = buf.parts[-1].rstrip(" ")
            buf.parts.append(f" ({suffix})")
            buf.space = buf.line_start = False

    def _void(self, name: str, attrs: dict[str, str], decls: dict[str, str]) -> None:
        if name == "br":
            buf = self.bufs[-1]
            buf.pending = 0
            buf.parts.append("\n")
            buf.line_start, buf.space = True, False
        elif name == "hr":
            self._break(2)
        elif name in ("img", "image") and not is_pixel(decls, attrs):
            alt = " ".join(html.unescape(attrs.get("alt", "")).split())
            if alt:
                self.text(f" {alt} ", raw=True)

    # -- text ----------------------------------------------------------------------------------------------------
    def text(self, data: str, raw: bool = False) -> None:
        if not data or self.silent:
            return
        if self.hidden:
            self.collector.add(data)
            return
        buf = self.bufs[-1]
        if not raw:
            data = html.unescape(data) if "&" in data else data
        soft = soft_reason(self.looks[-1], self.sheet, len(self.stack)) if len(self.looks) > 1 else None
        if not data.isspace():
            if self.shown:
                self.collector.add(data)
            elif soft:
                self.collector.add_soft(soft, data, self.visible_chars)
                if not self.include_hidden:
                    return
            else:
                self.collector.end()  # visible text: the next hidden text starts a new run
        marked = bool(soft or self.shown)
        if buf.marked and not marked and not data.isspace():
            self._unmark(buf)
        if not self.pre:
            data = _WS.sub(" ", data)
            if buf.line_start or buf.space or buf.pending:
                data = data.lstrip(" ")
            if not data:
                return
        if marked and not buf.marked and not data.isspace():  # white-on-white spaces are kept without a marker
            self._put(HIDDEN_OPEN)  # (they opened "[hidden]" even in the default text: 'a<span style=color:#fff> ')
            buf.marked = True
        elif not marked:
            self.visible_chars += len(data)
        self._put(data)

    def finish(self) -> str:
        while self.stack:
            self._pop()
        self._unmark(self.bufs[0])
        self.collector.flush()
        return tidy_text("".join(self.bufs[0].parts))


def html_to_text(markup: str) -> str:
    """Convert mail HTML to readable plain text; linear time, never raises.

    Args:
        markup: The HTML source (already decoded to str).

    Returns:
        Readable text (see the module docstring); "" for non-strings or empty input.
    """
    return convert_html(markup).text


def convert_html(markup: str, include_hidden: bool = False) -> HtmlText:
    """Convert mail HTML to readable text, and report what a person reading it would not see.

    Args:
        markup: The HTML source (already decoded to str).
        include_hidden: Keep hidden text in place, between "[hidden] " and "[/hidden]", instead of leaving it out.

    Returns:
        The text (as `html_to_text`), the hidden runs (collected even when included), their total length in
        characters, and the hosts of the links' http(s) targets; never raises.
    """
    if not isinstance(markup, str) or not markup:
        return HtmlText("", (), 0, ())
    converter = _Converter(include_hidden)
    converter.run(markup)
    found, text = converter.collector, converter.finish()  # finish() closes the last hidden run
    return HtmlText(text, tuple(found.segments), found.total_chars, tuple(converter.link_hosts))
