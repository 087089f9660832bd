"""XLSX: each sheet under a "--- sheet: Name ---" line, its rows as "a | b | c".

Cells show what Excel shows, roughly: shared and inline strings, numbers in General format, TRUE/FALSE,
error codes, formula results (the formula itself when no result is cached), and ISO dates or times where the
cell's number format is a date format (built-in or custom; 1900 and 1904 date systems). At most `max_sheets`
sheets, `max_rows` rows per sheet and `max_columns` columns are read; each cut is noted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from server.content.extract.model import Job, clip
from server.content.extract.ooxml import Package
from server.content.extract.xlsx_values import date_styles, number_text, serial_to_iso, unescape
from server.content.extract.xmlsafe import END, START, TEXT, Event

_MAIN = (
    "spreadsheetml.sheet.main+xml",
    "spreadsheetml.template.main+xml",
    "ms-excel.sheet.macroenabled.main+xml",
    "ms-excel.template.macroenabled.main+xml",
)
_REF = re.compile(r"([A-Za-z]{1,3})(\d*)")
_MAX_STRINGS = 2_000_000
_CHECK_EVERY = 4096  # events between deadline checks


def extract_xlsx(data: bytes, job: Job) -> None:
    package = Package(data, job, "XLSX")
    workbook = package.main_part(_MAIN, "xl/workbook.xml")
    sheets, date1904 = _workbook(package, workbook)
    if not sheets:
        job.note("XLSX: the workbook lists no sheets")
        return
    job.sheets = tuple(name for name, _, _ in sheets)
    rels = package.relationships(workbook)
    by_type = {kind: path for kind, path in reversed(list(rels.values()))}
    strings = _SharedStrings(package, by_type.get("sharedStrings", "xl/sharedStrings.xml"), job)
    styles = date_styles(package, by_type.get("styles"))
    limit = min(len(sheets), max(job.limits.max_sheets, 0))
    for index, (name, rel_id, state) in enumerate(sheets[:limit]):
        if package.exhausted or not job.proceed(f"XLSX sheet {index + 1} of {len(sheets):,}"):
            return
        kind, path = rels.get(rel_id, ("", ""))
        hidden = " (hidden)" if state in ("hidden", "veryHidden") else ""
        if not job.write(f"--- sheet: {name}{hidden} ---\n"):
            return
        if kind == "chartsheet":
            job.write("(a chart sheet: no cells)\n\n")
            continue
        if not package.has(path):
            job.write("(the sheet's part is missing)\n\n")
            continue
        _Sheet(job, name, strings, styles, date1904).run(package.tolerant_events(path))
        if not job.write("\n"):
            return
    if limit < len(sheets) and not job.timed_out:
        job.cut(f"XLSX: the workbook has {len(sheets):,} sheets; only the first {limit:,} were read")


def _workbook(package: Package, path: str) -> tuple[list[tuple[str, str, str]], bool]:
    sheets: list[tuple[str, str, str]] = []
    date1904 = False
    for kind, name, attrs in package.events(path):
        if kind != START or not isinstance(attrs, dict):
            continue
        if name == "sheet" and len(sheets) < 100_000:
            sheets.append((attrs.get("name", f"Sheet{len(sheets) + 1}"), attrs.get("id", ""), attrs.get("state", "")))
        elif name == "workbookPr":
            date1904 = attrs.get("date1904", "").lower() in ("1", "true")
    return sheets, date1904


class _SharedStrings:
    """The workbook's shared strings, parsed only as far as the cells read so far reach.

    Excel writes them in order of first use, so the first window of a sheet needs the first strings only;
    a large table (millions of strings) costs no more than the rows actually read.
    """

    def __init__(self, package: Package, path: str, job: Job) -> None:
        self.job = job
        self.items: list[str] = []
        self._events = package.events(path)
        self._done = False
        self._count = 0
        self._current: list[str] = []
        self._size = self._in_text = self._phonetic = 0

    def get(self, index: int) -> str:
        if index < 0 or index >= _MAX_STRINGS:
            return ""
        try:
            while index >= len(self.items) and not self._done:
                self._advance()
        except Exception as exc:  # malformed XML, a DTD, damaged deflate data
            self._done = True
            self.job.cut(f"XLSX: the shared strings are unreadable past string {len(self.items):,} ({exc})")
        return self.items[index] if index < len(self.items) else ""

    def _advance(self) -> None:
        """Parse up to the end of the next string."""
        cap = self.job.limits.max_cell_chars
        for kind, name, value in self._events:
            self._count += 1
            if self._count % _CHECK_EVERY == 0 and not self.job.proceed("XLSX shared strings"):
                break
            if kind == TEXT:
                if self._in_text and not self._phonetic and self._size < cap:
                    self._current.append(str(value))
                    self._size += len(str(value))
            elif kind == START:
                if name == "si":
                    self._current, self._size = [], 0
                elif name == "t":
                    self._in_text = 1
                elif name == "rPh":
                    self._phonetic += 1
            elif kind == END:
                if name == "t":
                    self._in_text = 0
                elif name == "rPh":
                    self._phonetic = max(self._phonetic - 1, 0)
                elif name == "si":
                    self.items.append(clip(unescape("".join(self._current)), cap))
                    return
        self._done = True


def _column(letters: str) -> int:
    index = 0
    for ch in letters.upper():
        index = index * 26 + ord(ch) - 64
    return index - 1


class _Sheet:
    def __init__(self, job: Job, name: str, strings: _SharedStrings, styles: dict[int, str], date1904: bool) -> None:
        self.job = job
        self.name = name
        self.strings = strings
        self.styles = styles
        self.date1904 = date1904
        self.rows = 0
        self.span: int | None = None  # rows the sheet's dimension claims
        self.wide = False
        self.cells: dict[int, str] = {}
        self.column = 0
        self.cell: dict[str, str] = {}
        self.parts: dict[str, list[str]] = {}
        self.target: str | None = None
        self.phonetic = 0

    def run(self, events: Iterable[Event]) -> None:
        limits = self.job.limits
        for count, (kind, name, value) in enumerate(events):
            if count % _CHECK_EVERY == 0 and not self.job.proceed(f"XLSX sheet '{self.name}', row {self.rows + 1:,}"):
                return
            if kind == TEXT:
                if self.target and not self.phonetic:
                    self.parts[self.target].append(str(value))
            elif kind == START:
                self._start(name, value if isinstance(value, dict) else {})
            elif kind == END and self._end(name):
                if self.job.full:
                    return
                if self.rows >= limits.max_rows:
                    spans = f" (its range spans {self.span:,} rows)" if self.span and self.span > self.rows else ""
                    self.job.cut(f"XLSX sheet '{self.name}': only the first {self.rows:,} rows were read{spans}")
                    return
        if self.wide:
            self.job.cut(f"XLSX sheet '{self.name}': columns past the first {limits.max_columns} were left out")

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        if name == "c":
            match = _REF.match(attrs.get("r", ""))
            self.column = _column(match.group(1)) if match and match.group(1) else self.column + 1
            self.cell = attrs
            self.parts = {"v": [], "t": [], "f": []}
        elif name in ("v", "f", "t") and self.parts:
            self.target = name
        elif name == "rPh":
            self.phonetic += 1
        elif name == "row":
            self.cells = {}
            self.column = -1
        elif name == "dimension":
            match = re.search(r"(\d+)$", attrs.get("ref", ""))
            self.span = int(match.group(1)) if match else None

    def _end(self, name: str) -> bool:
        """Handles an end tag; True when a row was written."""
        if name in ("v", "f", "t"):
            self.target = None
        elif name == "rPh":
            self.phonetic = max(self.phonetic - 1, 0)
        elif name == "c" and self.parts:
            text = self._value()
            self.parts = {}
            if text:
                if self.column >= self.job.limits.max_columns or self.column < 0:
                    self.wide = True
                else:
                    self.cells[self.column] = clip(
                        " ".join(text.split()).replace("|", "\\|"), self.job.limits.max_cell_chars
                    )
        elif name == "row" and self.cells:
            width = max(self.cells) + 1
            self.job.write(" | ".join(self.cells.get(i, "") for i in range(width)) + "\n")
            self.cells = {}
            self.rows += 1
            return True
        return False

    def _value(self) -> str:
        kind = self.cell.get("t", "n")
        raw = "".join(self.parts["v"])
        if kind == "s":
            index = int(raw) if raw.strip().isdecimal() else -1  # isdecimal: what int() reads ("¹" is a digit)
            return self.strings.get(index)
        if kind == "inlineStr":
            return unescape("".join(self.parts["t"]))
        if kind == "b":
            return "TRUE" if raw.strip() in ("1", "true") else "FALSE" if raw.strip() else ""
        if kind in ("str", "e", "d"):
            return raw
        if not raw.strip():
            formula = "".join(self.parts["f"]).strip()
            return f"={formula}" if formula else ""
        style = self.cell.get("s", "0")
        date_kind = self.styles.get(int(style)) if style.isdecimal() else None
        if date_kind:
            try:
                iso = serial_to_iso(float(raw), date_kind, self.date1904)
            except ValueError:
                iso = None
            if iso:
                return iso
        return number_text(raw)
