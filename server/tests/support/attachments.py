"""Real attachment files built in memory: a PDF with text, DOCX, XLSX, PPTX, a PNG and zip archives.

Each builder gives the bytes a mail client would attach; the files open in real readers (the PDF, DOCX, XLSX and
PNG in their usual applications). The `*_parts` functions give the zip members as a dict, so a test can swap
or corrupt one part before `zip_parts` packs them. Standard library only.
"""

from __future__ import annotations

import datetime as dt
import struct
import zipfile
import zlib
from collections.abc import Sequence
from io import BytesIO
from xml.sax.saxutils import escape, quoteattr

_CT = "application/vnd.openxmlformats-officedocument"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def zip_parts(parts: dict[str, bytes | str], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """Pack members into zip bytes (str members are UTF-8 encoded), in the order given."""
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, content in parts.items():
            archive.writestr(name, content.encode("utf-8") if isinstance(content, str) else content)
    return buffer.getvalue()


# -- PDF ---------------------------------------------------------------------------------------------------------


def _pdf_string(text: str) -> bytes:
    out = bytearray(b"(")
    for byte in text.encode("cp1252", "replace"):
        if byte in b"()\\":
            out += b"\\" + bytes([byte])
        elif byte < 32 or byte > 126:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b")")


def build_pdf(
    pages: Sequence[str],
    *,
    compress: bool = False,
    title: str | None = None,
    image_bytes: int = 0,
    inherit_resources: bool = False,
) -> bytes:
    """A PDF with one page per string, each line of it set in Helvetica (WinAnsi: Latin-1 and typographic marks).

    Args:
        pages: The text of each page; "\\n" starts a new line.
        compress: FlateDecode the page content streams (as most producers do).
        title: A document title for the Info dictionary.
        image_bytes: Size of an uncompressed grey image drawn on the first page (a scan's weight, no text).
        inherit_resources: Put the font on the page tree root, which every page inherits (as many producers do).
    """
    objects: list[bytes] = []  # object n is objects[n - 1]

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    add(b"<< /Type /Catalog /Pages 2 0 R >>")
    add(b"")  # the page tree, filled in below
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    image = None
    if image_bytes > 0:
        side = max(int(image_bytes**0.5), 1)
        pixels = bytes(range(256)) * (side * side // 256 + 1)
        image = add(
            b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 "
            b"/Length %d >>\nstream\n%s\nendstream" % (side, side, side * side, pixels[: side * side])
        )
    kids = []
    for number, text in enumerate(pages):
        lines = [_pdf_string(line) + b" Tj T*" for line in text.split("\n")]
        stream = b"BT /F1 11 Tf 14 TL 56 780 Td\n" + b"\n".join(lines) + b"\nET"
        drawn = image is not None and number == 0
        if drawn:
            stream = b"q 400 0 0 400 96 200 cm /Im1 Do Q\n" + stream
        if compress:
            stream = zlib.compress(stream)
            content = add(b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(stream), stream))
        else:
            content = add(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        xobject = b" /XObject << /Im1 %d 0 R >>" % image if drawn else b""
        resources = b"" if inherit_resources else b"/Resources << /Font << /F1 %d 0 R >>%s >> " % (font, xobject)
        kids.append(
            add(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] %s/Contents %d 0 R >>" % (resources, content))
        )
    shared = b" /Resources << /Font << /F1 %d 0 R >> >>" % font if inherit_resources else b""
    kid_list = b" ".join(b"%d 0 R" % k for k in kids)
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d%s >>" % (kid_list, len(kids), shared)
    info = add(b"<< /Title %s /Producer (attachments.py) >>" % _pdf_string(title)) if title else None
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"/Size %d /Root 1 0 R" % (len(objects) + 1) + (b" /Info %d 0 R" % info if info else b"")
    out += b"trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n" % (trailer, xref)
    return bytes(out)


# -- DOCX --------------------------------------------------------------------------------------------------------

Block = str | tuple  # "paragraph" | ("heading", level, text) | ("bullet", text[, level]) | ("table", rows)


def _run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r>'


def _docx_block(block: Block) -> str:
    if isinstance(block, str):
        return f"<w:p>{_run(block)}</w:p>"
    kind = block[0]
    if kind == "heading":
        return f'<w:p><w:pPr><w:pStyle w:val="Heading{block[1]}"/></w:pPr>{_run(block[2])}</w:p>'
    if kind == "bullet":
        level = block[2] if len(block) > 2 else 0
        numbering = f'<w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="1"/></w:numPr>'
        return f'<w:p><w:pPr><w:pStyle w:val="ListParagraph"/>{numbering}</w:pPr>{_run(block[1])}</w:p>'
    if kind == "table":
        rows = "".join(
            "<w:tr>" + "".join(f"<w:tc><w:p>{_run(str(cell))}</w:p></w:tc>" for cell in row) + "</w:tr>"
            for row in block[1]
        )
        return f"<w:tbl><w:tblPr/>{rows}</w:tbl>"
    raise ValueError(f"unknown block {kind!r}")


def docx_parts(blocks: Sequence[Block]) -> dict[str, bytes | str]:
    """The members of a DOCX holding `blocks` (see `Block`)."""
    heading_styles = "".join(
        f'<w:style w:type="paragraph" w:styleId="Heading{n}"><w:name w:val="heading {n}"/></w:style>'
        for n in range(1, 4)
    )
    return {
        "[Content_Types].xml": _DECL + '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/word/document.xml" ContentType="{_CT}.wordprocessingml.document.main+xml"/>'
        f'<Override PartName="/word/styles.xml" ContentType="{_CT}.wordprocessingml.styles+xml"/></Types>',
        "_rels/.rels": _DECL + f'<Relationships xmlns="{_PKG_REL}">'
        f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="word/document.xml"/></Relationships>',
        "word/_rels/document.xml.rels": _DECL + f'<Relationships xmlns="{_PKG_REL}">'
        f'<Relationship Id="rId1" Type="{_REL}/styles" Target="styles.xml"/></Relationships>',
        "word/styles.xml": _DECL + f'<w:styles xmlns:w="{_W}">{heading_styles}'
        '<w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/></w:style></w:styles>',
        "word/document.xml": _DECL
        + f'<w:document xmlns:w="{_W}"><w:body>'
        + "".join(_docx_block(block) for block in blocks)
        + "<w:sectPr/></w:body></w:document>",
    }


def build_docx(blocks: Sequence[Block]) -> bytes:
    """A DOCX document: paragraphs, headings, bullet items and tables in order."""
    return zip_parts(docx_parts(blocks))


# -- XLSX --------------------------------------------------------------------------------------------------------


def _column(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def _excel_serial(value: dt.date) -> float:
    if isinstance(value, dt.datetime):
        delta = value - dt.datetime(1899, 12, 30)
        return delta.days + delta.seconds / 86400
    return float((value - dt.date(1899, 12, 30)).days)


def xlsx_parts(
    sheets: dict[str, Sequence[Sequence[object]]], *, inline_strings: bool = False
) -> dict[str, bytes | str]:
    """The members of an XLSX with one worksheet per entry of `sheets` (name -> rows of cell values).

    Cells: str (shared strings, or inline with `inline_strings`), int/float, bool, datetime.date/datetime (a
    date-styled serial number), None (no cell).
    """
    shared: dict[str, int] = {}
    worksheets = []
    for rows in sheets.values():
        xml_rows = []
        for r, row in enumerate(rows, 1):
            cells = []
            for c, value in enumerate(row):
                ref = f"{_column(c)}{r}"
                if value is None:
                    continue
                if isinstance(value, bool):
                    cells.append(f'<c r="{ref}" t="b"><v>{int(value)}</v></c>')
                elif isinstance(value, (int, float)):
                    cells.append(f'<c r="{ref}"><v>{value!r}</v></c>')
                elif isinstance(value, dt.date):
                    style = 2 if isinstance(value, dt.datetime) else 1
                    cells.append(f'<c r="{ref}" s="{style}"><v>{_excel_serial(value)!r}</v></c>')
                elif inline_strings:
                    cells.append(f'<c r="{ref}" t="inlineStr"><is><t>{escape(str(value))}</t></is></c>')
                else:
                    index = shared.setdefault(str(value), len(shared))
                    cells.append(f'<c r="{ref}" t="s"><v>{index}</v></c>')
            xml_rows.append(f'<row r="{r}">{"".join(cells)}</row>')
        width = max((len(row) for row in rows), default=1)
        dimension = f"A1:{_column(max(width - 1, 0))}{max(len(rows), 1)}"
        worksheets.append(
            _DECL + f'<worksheet xmlns="{_S}" xmlns:r="{_REL}"><dimension ref="{dimension}"/>'
            f"<sheetData>{''.join(xml_rows)}</sheetData></worksheet>"
        )
    overrides = "".join(
        f'<Override PartName="/xl/worksheets/sheet{n}.xml" ContentType="{_CT}.spreadsheetml.worksheet+xml"/>'
        for n in range(1, len(worksheets) + 1)
    )
    sheet_list = "".join(
        f'<sheet name={quoteattr(name)} sheetId="{n}" r:id="rId{n}"/>' for n, name in enumerate(sheets, 1)
    )
    sheet_rels = "".join(
        f'<Relationship Id="rId{n}" Type="{_REL}/worksheet" Target="worksheets/sheet{n}.xml"/>'
        for n in range(1, len(worksheets) + 1)
    )
    strings = "".join(f'<si><t xml:space="preserve">{escape(text)}</t></si>' for text in shared)
    parts: dict[str, bytes | str] = {
        "[Content_Types].xml": _DECL + '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{_CT}.spreadsheetml.sheet.main+xml"/>{overrides}'
        f'<Override PartName="/xl/sharedStrings.xml" ContentType="{_CT}.spreadsheetml.sharedStrings+xml"/>'
        f'<Override PartName="/xl/styles.xml" ContentType="{_CT}.spreadsheetml.styles+xml"/></Types>',
        "_rels/.rels": _DECL + f'<Relationships xmlns="{_PKG_REL}">'
        f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": _DECL + f'<workbook xmlns="{_S}" xmlns:r="{_REL}"><sheets>{sheet_list}</sheets></workbook>',
        "xl/_rels/workbook.xml.rels": _DECL + f'<Relationships xmlns="{_PKG_REL}">{sheet_rels}'
        f'<Relationship Id="rIdS" Type="{_REL}/sharedStrings" Target="sharedStrings.xml"/>'
        f'<Relationship Id="rIdT" Type="{_REL}/styles" Target="styles.xml"/></Relationships>',
        "xl/sharedStrings.xml": _DECL + f'<sst xmlns="{_S}" count="{len(shared)}" uniqueCount="{len(shared)}">'
        f"{strings}</sst>",
        "xl/styles.xml": _DECL + f'<styleSheet xmlns="{_S}"><cellXfs count="3"><xf numFmtId="0"/>'
        '<xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="22" applyNumberFormat="1"/></cellXfs></styleSheet>',
    }
    for n, sheet in enumerate(worksheets, 1):
        parts[f"xl/worksheets/sheet{n}.xml"] = sheet
    return parts


def build_xlsx(sheets: dict[str, Sequence[Sequence[object]]], *, inline_strings: bool = False) -> bytes:
    """An XLSX workbook (see `xlsx_parts`)."""
    return zip_parts(xlsx_parts(sheets, inline_strings=inline_strings))


# -- PPTX --------------------------------------------------------------------------------------------------------


def pptx_parts(slides: Sequence[Sequence[str]]) -> dict[str, bytes | str]:
    """The members of a PPTX with one slide per entry of `slides`, each a list of text paragraphs."""
    parts: dict[str, bytes | str] = {
        "[Content_Types].xml": _DECL + '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/ppt/presentation.xml" ContentType="{_CT}.presentationml.presentation.main+xml"/>'
        "</Types>",
        "_rels/.rels": _DECL + f'<Relationships xmlns="{_PKG_REL}">'
        f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="ppt/presentation.xml"/></Relationships>',
        "ppt/presentation.xml": _DECL
        + f'<p:presentation xmlns:p="{_P}" xmlns:r="{_REL}"><p:sldIdLst>'
        + "".join(f'<p:sldId id="{255 + n}" r:id="rId{n}"/>' for n in range(1, len(slides) + 1))
        + "</p:sldIdLst></p:presentation>",
        "ppt/_rels/presentation.xml.rels": _DECL
        + f'<Relationships xmlns="{_PKG_REL}">'
        + "".join(
            f'<Relationship Id="rId{n}" Type="{_REL}/slide" Target="slides/slide{n}.xml"/>'
            for n in range(1, len(slides) + 1)
        )
        + "</Relationships>",
    }
    for n, paragraphs in enumerate(slides, 1):
        body = "".join(f"<a:p><a:r><a:t>{escape(text)}</a:t></a:r></a:p>" for text in paragraphs)
        parts[f"ppt/slides/slide{n}.xml"] = (
            _DECL + f'<p:sld xmlns:p="{_P}" xmlns:a="{_A}"><p:cSld><p:spTree><p:sp><p:txBody>{body}'
            "</p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
        )
    return parts


def build_pptx(slides: Sequence[Sequence[str]]) -> bytes:
    """A PPTX presentation (see `pptx_parts`)."""
    return zip_parts(pptx_parts(slides))


# -- PNG ---------------------------------------------------------------------------------------------------------


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def build_png(width: int = 4, height: int = 3, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A truecolour PNG of one colour."""
    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(row * height))
        + _chunk(b"IEND", b"")
    )


# -- hostile attachments -----------------------------------------------------------------------------------------

_LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">'
    + "".join(f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10))
    + f']><w:document xmlns:w="{_W}"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>'
)


def encrypted_pdf(text: str = "secret", password: str = "hunter2", algorithm: str = "AES-256") -> bytes:
    """A PDF that needs `password` to open (pypdf, imported here, does the encryption)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(BytesIO(build_pdf([text]))))
    writer.encrypt(user_password=password, owner_password="owner-" + password, algorithm=algorithm)
    buffer = BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def hostile_attachments(bomb_mb: int = 64) -> dict[str, tuple[bytes, str, str]]:
    """Attachments that try to exhaust a reader: {case: (bytes, declared MIME type, file name)}.

    A DOCX whose document inflates to `bomb_mb` MB from a few hundred KB, a DOCX with a billion-laughs DTD, an
    encrypted PDF, a 10,000-page PDF, a 1,000-sheet XLSX, a zip listing 12,000 entries, truncated DOCX and PDF
    files, and a PNG labelled as a PDF. About 1 s to build.
    """
    bomb = docx_parts([])
    filler = "<w:p><w:r><w:t>" + "A" * (bomb_mb * 1024 * 1024) + "</w:t></w:r></w:p>"
    bomb["word/document.xml"] = str(bomb["word/document.xml"]).replace("<w:sectPr/>", filler)
    laughs = docx_parts([])
    laughs["word/document.xml"] = _LAUGHS
    octet = "application/octet-stream"
    docx = build_docx(["A paragraph that the cut leaves behind."] * 50)
    pdf = build_pdf([f"Page {n}" for n in range(1, 41)])
    return {
        "zip bomb docx": (zip_parts(bomb), octet, "bomb.docx"),
        "billion laughs docx": (zip_parts(laughs), octet, "laughs.docx"),
        "encrypted pdf": (encrypted_pdf(), "application/pdf", "locked.pdf"),
        "10,000-page pdf": (build_pdf([f"page {n}" for n in range(1, 10_001)]), "application/pdf", "huge.pdf"),
        "1,000-sheet xlsx": (build_xlsx({f"S{n}": [[n]] for n in range(1000)}), octet, "sheets.xlsx"),
        "12,000-entry zip": (
            zip_parts({f"f{n}.txt": b"" for n in range(12_000)}, compression=zipfile.ZIP_STORED),
            "application/zip",
            "many.zip",
        ),
        "truncated docx": (docx[: len(docx) // 2], octet, "cut.docx"),
        "truncated pdf": (pdf[: len(pdf) * 2 // 3], "application/pdf", "cut.pdf"),
        "png labelled pdf": (build_png(), "application/pdf", "photo.pdf"),
    }
