"""DOCX: the main document's paragraphs in order, headings as "#", list items as "-", tables as "a | b | c" rows.

Streams word/document.xml (or the part [Content_Types].xml names) through the DTD-refusing expat layer. Deleted
text, field codes and the VML fallback copies of text boxes are skipped; headers, footers, footnotes and
comments are not read. Styles come from word/styles.xml (heading level from the built-in style name or the
outline level, so localized style ids work).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from server.content.extract.model import Job, clip
from server.content.extract.ooxml import Package
from server.content.extract.xmlsafe import END, START, TEXT, Event

_MAIN = ("wordprocessingml.document.main+xml", "wordprocessingml.document.macroenabled.main+xml")
_HEADING = re.compile(r"^heading\s*([1-9])$", re.I)
_SKIP = frozenset({"delText", "instrText", "Fallback", "rPr"})  # deleted text, field codes, VML copies
_CHECK_EVERY = 2048  # events between deadline checks


def extract_docx(data: bytes, job: Job) -> None:
    package = Package(data, job, "DOCX")
    main = package.main_part(_MAIN, "word/document.xml")
    if not package.has(main):
        job.note("DOCX: the package has no main document part")
        return
    styles = _styles(package, main)
    reader = _Reader(job, styles)
    try:
        reader.run(package.tolerant_events(main))
    finally:
        reader.finish()


def _styles(package: Package, main: str) -> dict[str, tuple[str, int]]:
    """styleId -> ("heading", level) | ("list", 0) | ("title", 1)."""
    path = next((p for t, p in package.relationships(main).values() if t == "styles"), "word/styles.xml")
    found: dict[str, tuple[str, int]] = {}
    style_id = ""
    for count, (kind, name, attrs) in enumerate(package.tolerant_events(path)):
        if count > 200_000:
            break
        if kind != START or not isinstance(attrs, dict):
            continue
        if name == "style":
            style_id = attrs.get("styleId", "")
        elif name == "name" and style_id:
            label = attrs.get("val", "").strip()
            heading = _HEADING.match(label)
            if heading:
                found[style_id] = ("heading", int(heading.group(1)))
            elif label.lower() in ("title", "subtitle"):
                found[style_id] = ("heading", 1 if label.lower() == "title" else 2)
            elif label.lower().startswith("list"):
                found.setdefault(style_id, ("list", 0))
        elif name == "outlineLvl" and style_id and style_id not in found:
            level = _int(attrs.get("val"))
            if level is not None and 0 <= level < 9:
                found[style_id] = ("heading", level + 1)
    return found


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


class _Paragraph:
    __slots__ = ("cap", "heading", "level", "listed", "parts", "size", "style")

    def __init__(self, cap: int) -> None:
        self.cap = cap  # characters kept (the whole text's cap: one paragraph can be a whole document)
        self.parts: list[str] = []
        self.size = 0
        self.style = ""
        self.heading = 0
        self.listed = False
        self.level = 0

    def add(self, text: str) -> None:
        if self.size < self.cap:
            self.parts.append(text)
            self.size += len(text)


class _Reader:
    def __init__(self, job: Job, styles: dict[str, tuple[str, int]]) -> None:
        self.job = job
        self.styles = styles
        self.paragraphs: list[_Paragraph] = []
        self.tables: list[list[str]] = []  # per open table: its current row's cells
        self.cells: list[list[str]] = []  # per open cell: its paragraphs
        self.skip = 0  # depth inside skipped elements
        self.in_text = False
        self.written = 0  # paragraphs and rows written
        self.blank = True  # the output ends with a blank line (or is empty)

    def run(self, events: Iterable[Event]) -> None:
        for count, (kind, name, value) in enumerate(events):
            if count % _CHECK_EVERY == 0 and not self.job.proceed(f"DOCX paragraph {self.written + 1}"):
                return
            if kind == TEXT:
                if self.in_text and not self.skip and self.paragraphs:
                    self.paragraphs[-1].add(str(value))
            elif kind == START:
                self._start(name, value if isinstance(value, dict) else {})
            elif kind == END:
                self._end(name)
            if self.job.full:
                return

    def finish(self) -> None:
        """Writes what a cut-off document left open: its innermost paragraph."""
        if self.paragraphs and not self.job.full and not self.job.timed_out:
            self.skip = 0
            self.cells.clear()
            self._paragraph_done(self.paragraphs[-1])
            self.paragraphs.clear()

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        if self.skip or name in _SKIP:
            self.skip += 1
            return
        paragraph = self.paragraphs[-1] if self.paragraphs else None
        if name == "p":
            self.paragraphs.append(_Paragraph(self.job.limits.max_text_chars + 1))
        elif name == "t":
            self.in_text = True
        elif name == "tbl":
            if not self.cells:
                self._blank()
            self.tables.append([])
        elif name == "tr" and self.tables:
            self.tables[-1] = []
        elif name == "tc":
            self.cells.append([])
        elif paragraph is None:
            return
        elif name == "tab":
            paragraph.add("\t")
        elif name in ("br", "cr"):
            paragraph.add("\n")
        elif name == "noBreakHyphen":
            paragraph.add("-")
        elif name == "pStyle":
            paragraph.style = attrs.get("val", "")
            kind, level = self.styles.get(paragraph.style, ("", 0))
            if kind == "heading":
                paragraph.heading = level
            elif kind == "list":
                paragraph.listed = True
        elif name == "outlineLvl":
            outline = _int(attrs.get("val"))
            if outline is not None and 0 <= outline < 9:
                paragraph.heading = outline + 1
        elif name == "numPr":
            paragraph.listed = True
        elif name == "ilvl":
            paragraph.level = min(max(_int(attrs.get("val")) or 0, 0), 8)

    def _end(self, name: str) -> None:
        if self.skip:
            self.skip -= 1
            return
        if name == "t":
            self.in_text = False
        elif name == "p" and self.paragraphs:
            self._paragraph_done(self.paragraphs.pop())
        elif name == "tc" and self.cells:
            cell = " ".join(part for part in self.cells.pop() if part)
            if self.tables:
                self.tables[-1].append(clip(cell.replace("|", "\\|"), self.job.limits.max_cell_chars))
        elif name == "tr" and self.tables:
            row = self.tables[-1][: self.job.limits.max_columns]
            self.tables[-1] = []
            while row and not row[-1]:
                row.pop()
            if row:
                self._emit(" | ".join(row))
        elif name == "tbl" and self.tables:
            self.tables.pop()
            if not self.cells:
                self._blank()

    def _paragraph_done(self, paragraph: _Paragraph) -> None:
        text = "".join(paragraph.parts).strip()
        if self.cells:  # inside a table cell: the cell joins its paragraphs
            self.cells[-1].append(" ".join(text.split()))
            return
        if not text:
            self._blank()
            return
        if paragraph.heading:
            self._blank()
            self._emit("#" * paragraph.heading + " " + " ".join(text.split()))
            self._blank()
        elif paragraph.listed:
            self._emit("  " * paragraph.level + "- " + text)
        else:
            self._emit(text)

    def _emit(self, line: str) -> None:
        if self.cells:
            self.cells[-1].append(line)
            return
        self.written += 1
        self.blank = False
        self.job.write(line + "\n")

    def _blank(self) -> None:
        if not self.blank and not self.cells:
            self.blank = True
            self.job.write("\n")
