"""The output side of the HTML converter: text buffers (the document, table cells), line breaks owed, table rows.

`html_text._Converter` extends `TextOutput`: the tokenizer and element rules live there, the writing here.
"""

from __future__ import annotations

HIDDEN_OPEN, HIDDEN_CLOSE = "[hidden] ", "[/hidden] "


class Buffer:
    """One output target: the document, or a table cell being collected."""

    __slots__ = ("line_start", "marked", "marker", "parts", "pending", "space")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pending = 0  # line breaks owed before the next text (only once there is text)
        self.line_start = True
        self.space = False
        self.marker = ""  # list bullet waiting for the item's first text
        self.marked = False  # inside "[hidden] ... [/hidden]" (include_hidden)


class TextOutput:
    """Where converted text goes: a stack of buffers (a table cell collects its own), bullets and quote marks."""

    def __init__(self) -> None:
        self.bufs = [Buffer()]
        self.rows: list[list[str] | None] = []  # None marks a table with no open row
        self.row_depth = 0
        self.quote = 0

    def _break(self, count: int) -> None:
        buf = self.bufs[-1]
        if buf.parts:
            buf.pending = max(buf.pending, count)

    def _unmark(self, buf: Buffer) -> None:
        if buf.marked:
            buf.parts.append(HIDDEN_CLOSE if buf.space or not buf.parts else " " + HIDDEN_CLOSE)
            buf.marked, buf.space, buf.line_start = False, True, False

    def _put(self, data: str) -> None:
        buf = self.bufs[-1]
        if buf.pending and buf.parts:
            buf.parts.append("\n" * buf.pending)
            buf.line_start = True
        buf.pending = 0
        if buf.line_start and self.quote:
            buf.parts.append("> " * self.quote)
        if buf.marker:
            buf.parts.append(buf.marker)
            buf.marker = ""
            data = data.lstrip(" ")
        buf.parts.append(data)
        buf.line_start = data.endswith("\n")
        buf.space = data.endswith(" ")

    def _close_row(self) -> None:
        cells = [cell for cell in self.rows.pop() or () if cell]
        self.row_depth -= 1
        if not cells:
            return
        self._break(1)
        if len(cells) > 1 and not any("\n" in cell for cell in cells):
            self._put(" | ".join(cells))
            self._break(1)
            return
        previous_multiline = False  # layout row: its cells are blocks, paragraphs set off by blank lines
        for cell in cells:
            multiline = "\n" in cell
            self._break(2 if multiline or previous_multiline else 1)
            self._put(cell)
            previous_multiline = multiline
        self._break(2 if previous_multiline else 1)


def flatten(buf: Buffer) -> str:
    return "\n".join(line.rstrip() for line in "".join(buf.parts).strip().split("\n"))
