"""The attachment extraction layer on well-formed files: each format's text, sniffing, windows and offsets.

Every fixture is built here or by `server.tests.support.attachments` (nothing is checked in). Hostile and
broken files are in test_extract_hostile.py.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import zipfile

import pytest

from server.content.extract import DEFAULT_LIMITS, HANDLERS, Extraction, extract_attachment
from server.content.extract.sniff import sniff
from server.content.extract.tabular import sniff_delimiter
from server.content.extract.xlsx_values import format_kind, number_text, serial_to_iso, unescape
from server.tests.support.attachments import (
    build_docx,
    build_pdf,
    build_png,
    build_pptx,
    build_xlsx,
    docx_parts,
    xlsx_parts,
    zip_parts,
)

BIG = 10_000_000


def read(data: bytes, mime_type: str = "application/octet-stream", filename: str = "", **kwargs) -> Extraction:
    kwargs.setdefault("max_chars", BIG)
    return extract_attachment(data, mime_type=mime_type, filename=filename, **kwargs)


def read_all_windows(data: bytes, max_chars: int, **kwargs) -> tuple[str, list[Extraction]]:
    """Every window from offset 0 on, following next_offset; returns the joined text and the windows."""
    windows = []
    offset = 0
    while True:
        window = read(data, max_chars=max_chars, offset=offset, **kwargs)
        windows.append(window)
        assert len(window.text) <= max_chars
        assert window.offset == offset
        if window.next_offset is None:
            assert not window.truncated
            break
        assert window.truncated and window.next_offset == offset + len(window.text)
        offset = window.next_offset
        assert len(windows) < 10_000
    return "".join(w.text for w in windows), windows


# -- formats -----------------------------------------------------------------------------------------------------


def test_pdf_pages_are_marked_and_text_is_exact():
    data = build_pdf(["Quarterly report\nRevenue rose 12% (see “Table 2”)", "Page two: café \\ done"], title="Q3")
    result = read(data, "application/pdf", "q3.pdf")
    assert result.kind == "text" and result.format == "pdf" and result.mime_type == "application/pdf"
    assert result.text == (
        "--- page 1 ---\nQuarterly report\nRevenue rose 12% (see “Table 2”)\n\n--- page 2 ---\nPage two: café \\ done"
    )
    assert result.pages == 2 and result.complete and not result.truncated and result.notes == ()
    assert result.total_chars == len(result.text) and result.size_bytes == len(data)


def test_pdf_with_compressed_streams_and_an_empty_page():
    result = read(build_pdf(["first", "", "third"], compress=True), "application/pdf", "x.pdf")
    assert result.text == "--- page 1 ---\nfirst\n\n--- page 2 ---\n(no text on this page)\n\n--- page 3 ---\nthird"
    assert result.notes == ("PDF: 1 of the 3 pages read have no text (scanned or image-only pages)",)


def test_pdf_pages_inherit_resources_from_the_page_tree():
    result = read(build_pdf(["inherited font", "again"], inherit_resources=True), "application/pdf", "i.pdf")
    assert result.text == "--- page 1 ---\ninherited font\n\n--- page 2 ---\nagain" and result.notes == ()


def test_pdf_without_any_text_says_it_is_probably_scanned():
    result = read(build_pdf(["", ""]), "application/pdf", "scan.pdf")
    assert "probably scanned images" in " ".join(result.notes)


def test_docx_headings_lists_tables_in_order():
    data = build_docx(
        [
            ("heading", 1, "Quarterly report"),
            "Revenue rose 12% over the quarter.",
            ("bullet", "North region"),
            ("bullet", "Nested detail", 1),
            ("table", [["Region", "Revenue"], ["North", "1,200"], ["South | East", "800"]]),
            ("heading", 2, "Outlook"),
            "Stable.",
        ]
    )
    result = read(data, "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "q.docx")
    assert result.format == "docx" and result.complete
    assert result.text == (
        "# Quarterly report\n\nRevenue rose 12% over the quarter.\n- North region\n  - Nested detail\n\n"
        "Region | Revenue\nNorth | 1,200\nSouth \\| East | 800\n\n## Outlook\n\nStable."
    )


def test_docx_skips_deleted_text_field_codes_and_fallback_copies():
    parts = docx_parts([])
    body = (
        "<w:p><w:r><w:t>kept</w:t></w:r><w:del><w:r><w:delText>deleted</w:delText></w:r></w:del>"
        "<w:r><w:instrText>HYPERLINK x</w:instrText></w:r><w:r><w:tab/><w:t>after tab</w:t><w:br/>"
        "<w:t>next line</w:t></w:r></w:p>"
        '<mc:AlternateContent xmlns:mc="urn:mc"><mc:Choice><w:p><w:r><w:t>box</w:t></w:r></w:p></mc:Choice>'
        "<mc:Fallback><w:p><w:r><w:t>box</w:t></w:r></w:p></mc:Fallback></mc:AlternateContent>"
    )
    parts["word/document.xml"] = str(parts["word/document.xml"]).replace("<w:sectPr/>", body)
    assert read(zip_parts(parts), filename="a.docx").text == "kept\tafter tab\nnext line\nbox"


def test_docx_localized_heading_style_ids_resolve_through_styles_xml():
    parts = docx_parts([])
    parts["word/styles.xml"] = str(parts["word/styles.xml"]).replace('w:styleId="Heading1"', 'w:styleId="berschrift1"')
    parts["word/document.xml"] = str(parts["word/document.xml"]).replace(
        "<w:sectPr/>", '<w:p><w:pPr><w:pStyle w:val="berschrift1"/></w:pPr><w:r><w:t>Titel</w:t></w:r></w:p>'
    )
    assert read(zip_parts(parts), filename="de.docx").text == "# Titel"


def test_xlsx_sheets_strings_numbers_booleans_dates():
    data = build_xlsx(
        {
            "Sales": [
                ["Item", "Qty", "Price", "Shipped", "When", "Paid"],
                ["Apples", 3, 1.25, True, dt.date(2024, 3, 5), dt.datetime(2024, 3, 5, 10, 30)],
                ["Pears", 10, 0.1 + 0.2, False, None, None],
            ],
            "Notes": [["only", None, "sparse"]],
        }
    )
    result = read(data, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "s.xlsx")
    assert result.format == "xlsx" and result.sheets == ("Sales", "Notes") and result.complete
    assert result.text == (
        "--- sheet: Sales ---\nItem | Qty | Price | Shipped | When | Paid\n"
        "Apples | 3 | 1.25 | TRUE | 2024-03-05 | 2024-03-05T10:30:00\nPears | 10 | 0.3 | FALSE\n\n"
        "--- sheet: Notes ---\nonly |  | sparse"
    )


def test_xlsx_formulas_errors_hidden_sheets_and_1904_dates():
    parts = xlsx_parts({"Calc": [[1, 2]], "Secret": [["x"]]})
    parts["xl/workbook.xml"] = (
        str(parts["xl/workbook.xml"])
        .replace('r:id="rId2"', 'r:id="rId2" state="hidden"')
        .replace("<sheets>", '<workbookPr date1904="1"/><sheets>')
    )
    cells = (
        '<c r="C1"><f>SUM(A1:B1)</f><v>3</v></c><c r="D1"><f>NOW()</f></c><c r="E1" t="e"><v>#DIV/0!</v></c>'
        '<c r="F1" t="str"><f>A1&amp;"x"</f><v>1x</v></c><c r="G1" s="1"><v>0</v></c>'
    )
    parts["xl/worksheets/sheet1.xml"] = str(parts["xl/worksheets/sheet1.xml"]).replace(
        "</c></row>", "</c>" + cells + "</row>"
    )
    result = read(zip_parts(parts), filename="calc.xlsx")
    assert result.text == (
        "--- sheet: Calc ---\n1 | 2 | 3 | =NOW() | #DIV/0! | 1x | 1904-01-01\n\n--- sheet: Secret (hidden) ---\nx"
    )


def test_xlsx_inline_strings():
    result = read(build_xlsx({"S": [["inline", 1]]}, inline_strings=True), filename="i.xlsx")
    assert result.text == "--- sheet: S ---\ninline | 1"


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("yyyy-mm-dd", "date"),
        ("d/m/yy", "date"),
        ("mmm yyyy", "date"),
        ("h:mm", "time"),
        ("hh:mm:ss", "time"),
        ("yyyy-mm-dd hh:mm", "datetime"),
        ("[$-409]d-mmm-yy;@", "date"),
        ("[h]:mm", "duration"),
        ("0.00", None),
        ('"day" 0', None),
        ("General", None),
        ("#,##0;[Red]-#,##0", None),
    ],
)
def test_number_format_kinds(code, kind):
    assert format_kind(code) == kind


def test_serial_dates_both_systems_and_the_1900_leap_bug():
    assert serial_to_iso(45356, "date", False) == "2024-03-05"
    assert serial_to_iso(45356.4375, "datetime", False) == "2024-03-05T10:30:00"
    assert serial_to_iso(0.75, "time", False) == "18:00:00"
    assert serial_to_iso(1, "date", False) == "1900-01-01"
    assert serial_to_iso(60, "date", False) == "1900-02-29"
    assert serial_to_iso(61, "date", False) == "1900-03-01"
    assert serial_to_iso(0, "date", True) == "1904-01-01"
    assert serial_to_iso(10.6320601851852, "duration", False) == "255:10:10"
    assert serial_to_iso(-1, "date", False) is None and serial_to_iso(1e12, "date", False) is None
    assert unescape("ABC_x000D_DEF _x005F_x000D_") == "ABC\rDEF _x000D_"
    assert number_text("3.0000000000000004") == "3" and number_text("1E+20") == "1e+20" and number_text("x") == "x"


def test_pptx_slides_in_presentation_order():
    result = read(build_pptx([["Roadmap", "Q1: launch"], ["Risks"]]), filename="deck.pptx")
    assert result.format == "pptx" and result.pages == 2
    assert result.text == "--- slide 1 ---\nRoadmap\nQ1: launch\n\n--- slide 2 ---\nRisks"


def test_csv_semicolons_quotes_and_tsv():
    csv_bytes = b'name;qty;note\nApples;3;"sweet; red"\n\nPears;4;"multi\nline"\n'
    result = read(csv_bytes, "text/csv", "f.csv")
    assert result.format == "csv"
    assert result.text == "name | qty | note\nApples | 3 | sweet; red\nPears | 4 | multi line"
    tsv = read(b"a\tb,c\n1\t2\n", "text/tab-separated-values", "f.tsv")
    assert tsv.format == "tsv" and tsv.text == "a | b,c\n1 | 2"
    assert sniff_delimiter("a|b|c\n1|2|3\n") == "|" and sniff_delimiter("one column\n") == ","


def test_plain_text_honours_the_charset_parameter():
    latin = "Grüße aus Köln".encode("iso-8859-1")
    assert read(latin, "text/plain; charset=iso-8859-1", "g.txt").text == "Grüße aus Köln"
    koi8 = "Привет, мир".encode("koi8-r")
    assert read(koi8, 'text/plain; charset="koi8-r"', "r.txt").text == "Привет, мир"
    assert read("naïve\r\nline".encode(), "application/octet-stream", "notes.log").text == "naïve\nline"


def test_html_goes_through_the_html_converter():
    html = '<html><head><meta charset="windows-1252"><title>x</title></head><body><h1>Menu</h1><p>Caf\xe9</p></body>'
    result = read(html.encode("cp1252"), "text/html", "menu.html")
    assert result.format == "html" and result.text == "Menu\n\nCafé"


def test_ics_summarizes_every_event():
    ics = (
        "BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nSUMMARY:Team sync\r\nDTSTART:20240305T100000Z\r\n"
        "LOCATION:Room 4\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:Offsite\r\nDTSTART;VALUE=DATE:20240306\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    result = read(ics.encode(), "text/plain", "invite.ics")
    assert result.format == "ics"
    assert result.text == (
        "Calendar invite: Team sync, starts 2024-03-05 10:00 UTC, location: Room 4\n"
        "Calendar invite: Offsite, starts 2024-03-06 (all day)"
    )


def test_eml_headers_then_body_then_attachments():
    attachment = base64.b64encode(b"%PDF-1.4 tiny").decode()
    eml = (
        "From: =?utf-8?q?Ren=C3=A9e?= <renee@example.com>\r\nTo: bob@example.com\r\nSubject: Minutes\r\n"
        "Date: Mon, 04 Mar 2024 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n"
        "\r\n--B\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSee attached.\r\n--B\r\n"
        'Content-Type: application/pdf; name="m.pdf"\r\nContent-Disposition: attachment; filename="m.pdf"\r\n'
        f"Content-Transfer-Encoding: base64\r\n\r\n{attachment}\r\n--B--\r\n"
    )
    result = read(eml.encode(), "message/rfc822", "")
    assert result.format == "eml"
    assert result.text == (
        "From: Renée <renee@example.com>\nTo: bob@example.com\nDate: Mon, 04 Mar 2024 10:00:00 +0000\n"
        "Subject: Minutes\n\nSee attached.\n\nAttachments: m.pdf (application/pdf, 13 bytes)"
    )


def test_zip_is_listed_never_extracted():
    data = zip_parts({"report.pdf": b"%PDF-" + b"x" * 5000, "photos/": b"", "photos/a.jpg": b"\xff\xd8\xff" * 10})
    result = read(data, "application/zip", "bundle.zip")
    assert result.format == "zip"
    assert result.text == (
        "Zip archive: 3 entries, 4.9 KB when extracted (contents not extracted)\n"
        "report.pdf  (4.9 KB)\nphotos/\nphotos/a.jpg  (30 bytes)"
    )


def test_small_image_is_returned_with_its_description():
    png = build_png(640, 480)
    result = read(png, "application/octet-stream", "scan.png")
    assert result.kind == "image" and result.format == "image/png" and result.mime_type == "image/png"
    assert result.image_bytes == png and result.text == "image/png image, 640×480 pixels, 1.9 KB"


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (b"GIF89a\x10\x00\x20\x00" + b"\x00" * 20, (16, 32)),
        (b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x11\x08\x00\x30\x00\x40" + b"\x00" * 12, (64, 48)),
        (b"RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00\x1f\x00\x00\x0f\x00\x00", (32, 16)),
    ],
)
def test_image_dimensions_from_headers(data, size):
    result = read(data, "image/x-whatever")
    assert result.kind == "image" and f"{size[0]}×{size[1]} pixels" in result.text


def test_unknown_binary_is_unsupported_with_name_type_and_size():
    result = read(bytes(range(256)) * 4, "application/x-msdownload", "setup.exe")
    assert result.kind == "unsupported" and result.text == "" and result.size_bytes == 1024
    assert result.notes == ("setup.exe (application/x-msdownload, 1.0 KB): its content cannot be read as text",)


def test_legacy_and_password_protected_office_files_say_what_they_are():
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
    assert "legacy Office file" in read(ole, "application/msword", "old.doc").notes[0]
    locked = ole + "EncryptionInfo".encode("utf-16-le")
    assert "password-protected Office document" in read(locked, "application/octet-stream", "locked.xlsx").notes[0]


# -- sniffing ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("maker", "fmt"),
    [
        (lambda: build_pdf(["x"]), "pdf"),
        (lambda: build_docx(["x"]), "docx"),
        (lambda: build_xlsx({"S": [["x"]]}), "xlsx"),
        (lambda: build_pptx([["x"]]), "pptx"),
        (lambda: build_png(), "image/png"),
        (lambda: zip_parts({"a.txt": "x"}), "zip"),
    ],
)
@pytest.mark.parametrize("label", [("application/octet-stream", "attachment"), ("application/pdf", "wrong.txt")])
def test_magic_bytes_win_over_labels(maker, fmt, label):
    assert sniff(maker(), label[0], label[1], 100).format == fmt


def test_office_parts_found_by_name_without_content_types():
    parts = docx_parts(["hello"])
    del parts["[Content_Types].xml"]
    assert read(zip_parts(parts), filename="x").text == "hello"


def test_generic_labels_defer_to_the_extension():
    assert sniff(b"a,b\n", "text/plain", "data.csv", 100).format == "csv"
    assert sniff(b"a,b\n", "application/vnd.ms-excel", "data.csv", 100).format == "csv"
    assert sniff(b"<p>x</p>", "application/octet-stream", "page.htm", 100).format == "html"
    assert sniff(b"plain words", "application/octet-stream", "", 100).format == "text"
    assert sniff(b"\x00\x01\x02", "application/octet-stream", "", 100).format == "unknown"
    assert sniff(b"a,b\n", "text/csv", "data.txt", 100).format == "csv"


def test_pdf_header_after_junk_is_a_pdf_unless_labelled_as_text():
    assert sniff(b"\r\n\x00junk%PDF-1.7\n", "application/octet-stream", "", 100).format == "pdf"
    assert sniff(b"Attached: see %PDF-1.7 header notes", "text/plain", "notes.txt", 100).format == "text"
    assert sniff(b"%PDF-1.7\n", "text/plain", "notes.txt", 100).format == "pdf"


def test_mislabelled_binary_gets_a_note():
    result = read(build_docx(["hi"]), "application/pdf", "report.pdf")
    assert result.format == "docx" and result.text == "hi"
    assert result.notes[0] == "declared as application/pdf, but the content is a DOCX document"


def test_every_handler_is_registered_with_a_label_and_type():
    assert set(HANDLERS) == {"pdf", "docx", "xlsx", "pptx", "csv", "tsv", "text", "html", "ics", "eml", "zip"}
    assert all(entry.label and "/" in entry.mime_type for entry in HANDLERS.values())


# -- windows -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("max_chars", [41, 333])
def test_windows_concatenate_to_the_whole_text(max_chars):
    data = build_pdf([f"Page {n}: " + "lorem ipsum dolor sit amet. " * 8 for n in range(12)])
    whole = read(data, "application/pdf", "w.pdf").text
    joined, windows = read_all_windows(data, max_chars, mime_type="application/pdf")
    assert joined == whole and len(windows) > 1
    assert all(w.total_chars <= w.offset + max_chars + 1 for w in windows[:-1])  # stopped early, not read whole
    assert windows[-1].complete and not windows[0].complete


def test_windows_of_every_text_format_concatenate():
    rows = [[f"r{i}", i, f"text {i}"] for i in range(300)]
    for data in (
        build_xlsx({"A": rows, "B": rows[:50]}),
        build_docx([f"Paragraph {i} " + "word " * 20 for i in range(80)]),
        build_pptx([[f"Slide {i}", "point " * 30] for i in range(40)]),
        "\n".join(",".join(str(c) for c in row) for row in rows).encode(),
    ):
        whole = read(data, filename="f.csv").text
        joined, _ = read_all_windows(data, 997, filename="f.csv")
        assert joined == whole and len(whole) > 2000


def test_offset_past_the_end_gives_an_empty_final_window():
    result = read(build_docx(["short"]), filename="x.docx", offset=10_000, max_chars=100)
    assert result.text == "" and result.offset == 5 and result.next_offset is None and not result.truncated


def test_bad_arguments_are_tolerated():
    result = extract_attachment(
        bytearray(b"hello"),
        mime_type=None,  # type: ignore[arg-type]
        filename=None,  # type: ignore[arg-type]
        max_chars=-3,
        offset=-8,
    )
    assert result.text == "h" and result.offset == 0 and result.next_offset == 1


def test_the_default_limits_are_sane():
    assert DEFAULT_LIMITS.max_image_bytes == 1024 * 1024 and DEFAULT_LIMITS.time_budget_s > 0
    assert DEFAULT_LIMITS.max_part_bytes <= DEFAULT_LIMITS.max_inflated_bytes


def test_nothing_touches_the_disk(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for data in (build_pdf(["x"]), build_docx(["x"]), build_xlsx({"S": [[1]]}), zip_parts({"a": "b"})):
        read(data)
    assert list(tmp_path.iterdir()) == []
    assert isinstance(zipfile.ZipFile(io.BytesIO(build_docx(["x"]))).namelist(), list)
