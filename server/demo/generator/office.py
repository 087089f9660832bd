"""Small, valid Office files for the demo mailbox: a DOCX (headings, paragraphs, bullets, a table) and an XLSX
(sheets of text, numbers and dates), byte-identical on every run.

Deterministic on purpose: zip members carry a fixed timestamp and are stored, not deflated (zlib's output
differs between builds, like the PNGs in `builders.py`). The shapes follow what Word and Excel write closely
enough that both open them; `server/tests/support/attachments.py` has the fuller builders the extraction tests
use (randomness and compression there do not matter).
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

_STAMP = (2026, 11, 1, 9, 0, 0)
_CT = "application/vnd.openxmlformats-officedocument"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_DEFAULTS = (
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
)

Block = str | tuple  # "paragraph" | ("heading", level, text) | ("bullet", text) | ("table", rows)
Cell = str | int | float | dt.date | None


def _zip(parts: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, content in parts.items():
            info = zipfile.ZipInfo(name, date_time=_STAMP)
            info.external_attr = 0o644 << 16
            archive.writestr(info, content.encode("utf-8"))
    return buffer.getvalue()


def _relationships(*targets: tuple[str, str]) -> str:
    links = "".join(
        f'<Relationship Id="rId{n}" Type="{_REL}/{kind}" Target="{target}"/>'
        for n, (kind, target) in enumerate(targets, 1)
    )
    return _DECL + f'<Relationships xmlns="{_PKG_REL}">{links}</Relationships>'


# -- DOCX --------------------------------------------------------------------------------------------------------


def _run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r>'


def _block(block: Block) -> str:
    if isinstance(block, str):
        return f"<w:p>{_run(block)}</w:p>"
    if block[0] == "heading":
        return f'<w:p><w:pPr><w:pStyle w:val="Heading{block[1]}"/></w:pPr>{_run(block[2])}</w:p>'
    if block[0] == "bullet":
        numbering = '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'
        return f'<w:p><w:pPr><w:pStyle w:val="ListParagraph"/>{numbering}</w:pPr>{_run(block[1])}</w:p>'
    if block[0] == "table":
        rows = "".join(
            "<w:tr>" + "".join(f"<w:tc><w:p>{_run(str(cell))}</w:p></w:tc>" for cell in row) + "</w:tr>"
            for row in block[1]
        )
        return f"<w:tbl><w:tblPr/>{rows}</w:tbl>"
    raise ValueError(f"unknown block {block[0]!r}")


def docx(blocks: Sequence[Block], *, title: str) -> bytes:
    """A Word document of paragraphs, headings, bullet items and tables, in order."""
    styles = "".join(
        f'<w:style w:type="paragraph" w:styleId="Heading{n}"><w:name w:val="heading {n}"/></w:style>' for n in (1, 2)
    )
    return _zip(
        {
            "[Content_Types].xml": _DECL + f'<Types xmlns="{_TYPES}">{_DEFAULTS}'
            f'<Override PartName="/word/document.xml" ContentType="{_CT}.wordprocessingml.document.main+xml"/>'
            f'<Override PartName="/word/styles.xml" ContentType="{_CT}.wordprocessingml.styles+xml"/>'
            '<Override PartName="/docProps/core.xml" '
            'ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>',
            "_rels/.rels": _DECL + f'<Relationships xmlns="{_PKG_REL}">'
            f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="word/document.xml"/>'
            '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/'
            'core-properties" Target="docProps/core.xml"/></Relationships>',
            "docProps/core.xml": _DECL + '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/'
            '2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<dc:title>{escape(title)}</dc:title></cp:coreProperties>",
            "word/_rels/document.xml.rels": _relationships(("styles", "styles.xml")),
            "word/styles.xml": _DECL + f'<w:styles xmlns:w="{_W}">{styles}<w:style w:type="paragraph" '
            'w:styleId="ListParagraph"><w:name w:val="List Paragraph"/></w:style></w:styles>',
            "word/document.xml": _DECL
            + f'<w:document xmlns:w="{_W}"><w:body>'
            + "".join(_block(block) for block in blocks)
            + "<w:sectPr/></w:body></w:document>",
        }
    )


# -- XLSX --------------------------------------------------------------------------------------------------------


def _column(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def _cell(ref: str, value: Cell, shared: dict[str, int]) -> str:
    if isinstance(value, dt.date):
        serial = (value - dt.date(1899, 12, 30)).days
        return f'<c r="{ref}" s="1"><v>{serial}</v></c>'
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f'<c r="{ref}"><v>{value!r}</v></c>'
    index = shared.setdefault(str(value), len(shared))
    return f'<c r="{ref}" t="s"><v>{index}</v></c>'


def xlsx(sheets: dict[str, Sequence[Sequence[Cell]]]) -> bytes:
    """An Excel workbook: one worksheet per entry (name -> rows); text goes to shared strings, dates are styled."""
    shared: dict[str, int] = {}
    worksheets = []
    for rows in sheets.values():
        xml_rows = "".join(
            f'<row r="{r}">'
            + "".join(_cell(f"{_column(c)}{r}", value, shared) for c, value in enumerate(row) if value is not None)
            + "</row>"
            for r, row in enumerate(rows, 1)
        )
        worksheets.append(_DECL + f'<worksheet xmlns="{_S}"><sheetData>{xml_rows}</sheetData></worksheet>')
    count = len(worksheets)
    overrides = "".join(
        f'<Override PartName="/xl/worksheets/sheet{n}.xml" ContentType="{_CT}.spreadsheetml.worksheet+xml"/>'
        for n in range(1, count + 1)
    )
    sheet_list = "".join(
        f'<sheet name={quoteattr(name)} sheetId="{n}" r:id="rId{n}"/>' for n, name in enumerate(sheets, 1)
    )
    strings = "".join(f'<si><t xml:space="preserve">{escape(text)}</t></si>' for text in shared)
    parts = {
        "[Content_Types].xml": _DECL + f'<Types xmlns="{_TYPES}">{_DEFAULTS}'
        f'<Override PartName="/xl/workbook.xml" ContentType="{_CT}.spreadsheetml.sheet.main+xml"/>{overrides}'
        f'<Override PartName="/xl/sharedStrings.xml" ContentType="{_CT}.spreadsheetml.sharedStrings+xml"/>'
        f'<Override PartName="/xl/styles.xml" ContentType="{_CT}.spreadsheetml.styles+xml"/></Types>',
        "_rels/.rels": _relationships(("officeDocument", "xl/workbook.xml")),
        "xl/workbook.xml": _DECL + f'<workbook xmlns="{_S}" xmlns:r="{_REL}"><sheets>{sheet_list}</sheets></workbook>',
        "xl/_rels/workbook.xml.rels": _relationships(
            *[("worksheet", f"worksheets/sheet{n}.xml") for n in range(1, count + 1)],
            ("sharedStrings", "sharedStrings.xml"),
            ("styles", "styles.xml"),
        ),
        "xl/sharedStrings.xml": _DECL + f'<sst xmlns="{_S}" count="{len(shared)}" uniqueCount="{len(shared)}">'
        f"{strings}</sst>",
        "xl/styles.xml": _DECL + f'<styleSheet xmlns="{_S}"><cellXfs count="2"><xf numFmtId="0"/>'
        '<xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>',
    }
    for n, sheet in enumerate(worksheets, 1):
        parts[f"xl/worksheets/sheet{n}.xml"] = sheet
    return _zip(parts)
