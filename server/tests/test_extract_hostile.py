"""Hostile and broken attachments: every one gets a clear answer (text so far + notes) in bounded time and memory.

Time bounds are asserted by count, not wall clock: an injected clock advances one second per deadline check, so
"stopped at the time limit" means the handler checked the deadline between units and stopped after N of them.
Memory bounds are measured with tracemalloc on the extraction alone (fixtures are built before it starts).
Corrupt, truncated and fuzzed files are in test_extract_fuzz.py.
"""

from __future__ import annotations

import io
import struct
import tracemalloc
from dataclasses import replace

import pytest

from server.content.extract import DEFAULT_LIMITS, Extraction, ExtractLimits, extract_attachment
from server.content.extract.zipcheck import directory_size
from server.tests.support.attachments import (
    build_docx,
    build_pdf,
    build_png,
    build_pptx,
    build_xlsx,
    docx_parts,
    hostile_attachments,
    pptx_parts,
    xlsx_parts,
    zip_parts,
)

pytestmark = pytest.mark.slow  # multi-megabyte and bomb attachments: the slow tier (`pytest -m slow`)

MB = 1024 * 1024
LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(f'<!ENTITY lol{n} "{("&lol" + str(n - 1) + ";") * 10 if n > 1 else "&lol;" * 10}">' for n in range(1, 10))
    + ']><root xmlns:w="urn:w"><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></root>'
)
XXE = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]><r>&e;</r>'


class TickClock:
    """Advances one second at every reading."""

    def __init__(self) -> None:
        self.now = 0.0
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        self.now += 1.0
        return self.now


def read(data: bytes, mime_type: str = "application/octet-stream", filename: str = "", **kwargs) -> Extraction:
    kwargs.setdefault("max_chars", 10_000_000)
    return extract_attachment(data, mime_type=mime_type, filename=filename, **kwargs)


def notes(result: Extraction) -> str:
    return " | ".join(result.notes)


def handled(result: Extraction) -> bool:
    """The result came from a handler or the sniffer, not from extract_attachment's last line of defence."""
    return isinstance(result, Extraction) and not any(
        n.startswith("the attachment could not be read") for n in result.notes
    )


def peak_bytes(function) -> tuple[object, int]:
    tracemalloc.start()
    try:
        value = function()
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def pdf_10k() -> bytes:
    return build_pdf([f"page {n} text" for n in range(1, 10_001)])


# -- PDF ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-256"])
def test_encrypted_pdf_needs_a_password(algorithm):
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(build_pdf(["secret figures"]))))
    writer.encrypt(user_password="hunter2", owner_password="owner", algorithm=algorithm)
    buffer = io.BytesIO()
    writer.write(buffer)
    result = read(buffer.getvalue(), "application/pdf", "locked.pdf")
    assert result.kind == "text" and result.text == "" and not result.complete
    assert result.notes == ("encrypted PDF: it needs a password to open, so its text cannot be read",)


def test_pdf_protected_by_an_owner_password_only_opens_with_the_empty_password():
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(build_pdf(["printable only"]))))
    writer.encrypt(user_password="", owner_password="owner", algorithm="AES-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    assert read(buffer.getvalue(), "application/pdf", "p.pdf").text == "--- page 1 ---\nprintable only"


def test_10000_page_pdf_stops_at_the_time_limit_between_pages(pdf_10k):
    clock = TickClock()
    result = read(pdf_10k, "application/pdf", "huge.pdf", clock=clock, limits=replace(DEFAULT_LIMITS, time_budget_s=5))
    assert result.pages == 10_000 and not result.complete
    assert result.text.endswith("--- page 4 ---\npage 4 text") and "--- page 5 ---" not in result.text
    assert result.notes == ("PDF page 5 of 10,000: extraction stopped at the time limit (5 s)",)
    assert clock.calls == 6  # the deadline read once, then one check per page


def test_10000_page_pdf_reads_only_the_pages_a_window_needs_and_at_most_max_pages(pdf_10k):
    first = read(pdf_10k, "application/pdf", "huge.pdf", max_chars=100)
    assert first.text.startswith("--- page 1 ---\npage 1 text") and first.truncated
    assert first.total_chars <= 101  # pages after the window were not extracted
    capped = read(pdf_10k, "application/pdf", "huge.pdf", limits=replace(DEFAULT_LIMITS, max_pages=3))
    assert capped.text.endswith("--- page 3 ---\npage 3 text") and not capped.complete
    assert notes(capped) == "PDF: only the first 3 of 10,000 pages were read (page limit)"


def test_25_mb_pdf_is_read_in_bounded_memory():
    data = build_pdf(["Scan of the signed contract", "Appendix"], image_bytes=25 * MB)
    assert len(data) > 25 * MB
    result, peak = peak_bytes(lambda: read(data, "application/pdf", "scan.pdf", max_chars=2000))
    assert result.text == "--- page 1 ---\nScan of the signed contract\n\n--- page 2 ---\nAppendix"
    assert peak < 4 * len(data)  # pypdf holds the file and the image stream; nothing grows past that


def test_truncated_pdf_recovers_the_pages_that_survive():
    data = build_pdf([f"page {n} text" for n in range(1, 11)])
    result = read(data[: int(len(data) * 0.7)], "application/pdf", "cut.pdf")
    assert result.text.startswith("--- page 1 ---\npage 1 text\n\n--- page 2 ---")
    assert "the file is damaged (PdfStreamError)" in notes(result)


def test_page_tree_cycles_and_wrong_counts_are_survived():
    data = build_pdf(["one", "two"])
    cyclic = read(data.replace(b"/Kids [5 0 R 7 0 R]", b"/Kids [5 0 R 2 0 R]"), "application/pdf", "c.pdf")
    assert cyclic.text == "--- page 1 ---\none" and cyclic.pages == 1
    miscounted = read(data.replace(b"/Count 2", b"/Count 9"), "application/pdf", "w.pdf")
    assert miscounted.text.endswith("--- page 2 ---\ntwo") and miscounted.pages == 2 and miscounted.complete


def test_one_broken_page_does_not_lose_the_others(monkeypatch):
    from pypdf import PageObject

    original = PageObject.extract_text

    def flaky(self, *args, **kwargs):
        text = original(self, *args, **kwargs)
        if "two" in text:
            raise ValueError("bad font")
        return text

    monkeypatch.setattr(PageObject, "extract_text", flaky)
    result = read(build_pdf(["one", "two", "three"]), "application/pdf", "x.pdf")
    assert result.text == "--- page 1 ---\none\n\n--- page 2 ---\n(no text on this page)\n\n--- page 3 ---\nthree"
    assert "PDF page 2: its text could not be extracted (ValueError)" in notes(result)


# -- zip bombs ---------------------------------------------------------------------------------------------------


def _bomb_docx(text_bytes: int) -> bytes:
    parts = docx_parts([])
    run = "<w:p><w:r><w:t>" + "A" * text_bytes + "</w:t></w:r></w:p>"
    parts["word/document.xml"] = str(parts["word/document.xml"]).replace("<w:sectPr/>", run)
    return zip_parts(parts)


def _declare_size(data: bytes, member: str, size: int) -> bytes:
    """The zip with `member`'s uncompressed size rewritten in its central directory entry (a lying header)."""
    out = bytearray(data)
    entry = out.find(b"PK\x01\x02")
    while entry >= 0:
        name_length = struct.unpack("<H", out[entry + 28 : entry + 30])[0]
        if out[entry + 46 : entry + 46 + name_length] == member.encode():
            out[entry + 24 : entry + 28] = struct.pack("<I", size)
            return bytes(out)
        entry = out.find(b"PK\x01\x02", entry + 4)
    raise AssertionError("member not found")


def test_docx_whose_document_inflates_past_the_part_cap_is_read_up_to_the_cap():
    data = _bomb_docx(20 * MB)
    assert len(data) < 100_000  # 20 MB of text compresses to almost nothing
    limits = replace(DEFAULT_LIMITS, max_part_bytes=512 * 1024)
    result, peak = peak_bytes(lambda: read(data, filename="bomb.docx", limits=limits))
    assert result.text == "A" * len(result.text) and 500_000 < len(result.text) <= 512 * 1024
    assert notes(result) == "DOCX: word/document.xml inflates to 20.0 MB; at most its first 512.0 KB are read"
    assert not result.complete and peak < 8 * MB


def test_zip_header_declaring_gigabytes_costs_only_the_capped_read():
    data = _declare_size(_bomb_docx(4 * MB), "word/document.xml", 0xFFFFFFF0)
    limits = replace(DEFAULT_LIMITS, max_part_bytes=512 * 1024)
    result = read(data, filename="liar.docx", limits=limits, max_chars=100)
    assert result.text == "A" * 100 and "inflates to 4.0 GB; at most its first 512.0 KB are read" in notes(result)


def test_zip_header_declaring_less_than_it_holds_cannot_inflate_more():
    result = read(_declare_size(_bomb_docx(4 * MB), "word/document.xml", 1000), filename="liar.docx")
    assert result.kind == "text" and len(result.text) < 1000 and "DOCX" in notes(result)


def test_total_inflation_across_parts_is_capped():
    rows = [["x" * 100] * 10 for _ in range(1000)]  # ~1.2 MB of XML per sheet, inline strings
    data = build_xlsx({f"S{n}": rows for n in range(6)}, inline_strings=True)
    limits = replace(DEFAULT_LIMITS, max_inflated_bytes=2 * MB, max_rows=100_000, max_text_chars=20 * MB)
    result = read(data, filename="wide.xlsx", limits=limits)
    assert notes(result) == "XLSX: the file inflates past 2.0 MB; reading stopped there"
    assert not result.complete and result.text.count("--- sheet:") == 2


def test_corrupt_deflate_data_in_content_types_is_handled():
    data = bytearray(build_docx(["kept"]))
    start = data.find(b"[Content_Types].xml") + len("[Content_Types].xml")  # its local header's name, then data
    data[start + 10 : start + 30] = b"\xff" * 20
    result = read(bytes(data), "application/octet-stream", "broken.docx")
    assert handled(result) and result.format == "docx" and result.text == "kept"
    assert notes(result).startswith("DOCX: [Content_Types].xml is unreadable past this point (error: Error -3")


def test_zip_with_too_many_entries_is_not_opened():
    data = zip_parts({f"f{n}.txt": b"" for n in range(150)})
    assert directory_size(data) == (150, directory_size(data)[1])
    result = read(data, "application/zip", "many.zip", limits=replace(DEFAULT_LIMITS, max_zip_entries=100))
    assert result.text == "" and "the archive lists 150 entries (more than 100 are not opened)" in notes(result)


def test_zip_listing_is_capped():
    data = zip_parts({f"f{n:03}.txt": b"x" for n in range(40)})
    result = read(data, "application/zip", "z.zip", limits=replace(DEFAULT_LIMITS, max_listed_entries=10))
    assert result.text.count("\n") == 10 and notes(result) == "zip: only the first 10 of 40 entries are listed"


# -- XML entities ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("builder", "part", "text", "where"),
    [
        (lambda: docx_parts(["kept"]), "word/document.xml", "", "DOCX: word/document.xml is unreadable"),
        (lambda: docx_parts(["kept"]), "[Content_Types].xml", "kept", "DOCX: [Content_Types].xml is unreadable"),
        (lambda: docx_parts(["kept"]), "word/_rels/document.xml.rels", "kept", "DOCX: word/_rels/document.xml.rels"),
        (lambda: xlsx_parts({"S": [[1]]}), "xl/worksheets/sheet1.xml", "--- sheet: S ---", "XLSX: xl/worksheets"),
        (lambda: xlsx_parts({"S": [["x"]]}), "xl/sharedStrings.xml", "--- sheet: S ---", "XLSX: the shared strings"),
        (lambda: pptx_parts([["x"]]), "ppt/slides/slide1.xml", "--- slide 1 ---", "PPTX: ppt/slides/slide1.xml"),
    ],
)
@pytest.mark.parametrize("payload", [LAUGHS, XXE], ids=["billion-laughs", "external-entity"])
def test_dtds_are_refused_never_expanded(builder, part, text, where, payload):
    parts = builder()
    parts[part] = payload
    result, peak = peak_bytes(lambda: read(zip_parts(parts), filename="x.bin"))
    assert result.text == text and not result.complete
    assert notes(result).startswith(where)
    assert "the XML declares a DTD (entities are never expanded here)" in notes(result)
    assert peak < 4 * MB


# -- sheets, rows, text ------------------------------------------------------------------------------------------


def test_1000_sheet_workbook_reads_the_first_50():
    data = build_xlsx({f"Sheet {n}": [[n]] for n in range(1000)})
    result = read(data, filename="many.xlsx")
    assert len(result.sheets) == 1000 and result.text.count("--- sheet:") == 50
    assert notes(result) == "XLSX: the workbook has 1,000 sheets; only the first 50 were read"


def test_1000_sheet_workbook_stops_at_the_time_limit():
    clock = TickClock()
    limits = replace(DEFAULT_LIMITS, time_budget_s=10, max_sheets=1000)
    result = read(build_xlsx({f"S{n}": [[n]] for n in range(1000)}), filename="m.xlsx", clock=clock, limits=limits)
    assert result.text.count("--- sheet:") < 10 and clock.calls <= 12
    assert notes(result).endswith("extraction stopped at the time limit (10 s)")


def test_long_docx_and_pptx_stop_at_the_time_limit():
    clock = TickClock()
    docx = read(build_docx([f"paragraph {n}" for n in range(5000)]), filename="d.docx", clock=clock)
    assert "DOCX paragraph" in notes(docx) and notes(docx).endswith("extraction stopped at the time limit (5 s)")
    assert 0 < docx.text.count("\n") < 5000 and clock.calls < 10
    clock = TickClock()
    pptx = read(build_pptx([[f"slide {n}"] for n in range(500)]), filename="p.pptx", clock=clock)
    assert pptx.text.count("--- slide") == 4 and pptx.pages == 500
    assert notes(pptx) == "PPTX slide 5 of 500: extraction stopped at the time limit (5 s)"


def test_rows_per_sheet_are_capped_with_the_sheet_range_in_the_note():
    data = build_xlsx({"Data": [[n, f"row {n}"] for n in range(1, 10_001)]})
    result = read(data, filename="rows.xlsx", limits=replace(DEFAULT_LIMITS, max_rows=500))
    assert result.text.splitlines()[-1] == "500 | row 500"
    assert notes(result) == "XLSX sheet 'Data': only the first 500 rows were read (its range spans 10,000 rows)"


def test_columns_and_cells_are_capped():
    data = build_xlsx({"W": [["y" * 5000] + [f"c{n}" for n in range(300)]]})
    result = read(data, filename="w.xlsx", limits=replace(DEFAULT_LIMITS, max_columns=5, max_cell_chars=20))
    assert result.text == "--- sheet: W ---\n" + "y" * 19 + "… | c0 | c1 | c2 | c3"
    assert "columns past the first 5 were left out" in notes(result)


def test_csv_rows_are_capped_and_the_clock_is_checked():
    data = "".join(f"{n},name {n}\n" for n in range(20_000)).encode()
    capped = read(data, "text/csv", "big.csv", limits=replace(DEFAULT_LIMITS, max_rows=1000))
    assert capped.text.splitlines()[-1] == "999 | name 999"
    assert notes(capped) == "CSV: only the first 1,000 rows were read (the file has about 20,000 lines)"
    clock = TickClock()
    timed = read(data, "text/csv", "big.csv", clock=clock, limits=replace(DEFAULT_LIMITS, time_budget_s=3))
    assert timed.text.count("\n") + 1 == 2 * 512 and "CSV row 1,025: extraction stopped" in notes(timed)


def test_whole_text_is_capped_at_max_text_chars():
    data = ("All work and no play. " * 2000).encode()
    limits = replace(DEFAULT_LIMITS, max_text_chars=1000)
    result = read(data, "text/plain", "long.txt", limits=limits)
    assert len(result.text) == 1000 and not result.truncated and not result.complete
    assert "text cut at the 1,000-character limit" in notes(result)
    assert read(data, "text/plain", "long.txt", limits=limits, offset=1000).text == ""


def test_oversized_input_and_images_are_described_not_read():
    huge = read(b"x" * 2000, "text/plain", "a.txt", limits=replace(DEFAULT_LIMITS, max_input_bytes=1000))
    assert huge.kind == "unsupported" and "over the 1,000 bytes limit: not read" in notes(huge)
    png = build_png(2000, 2000)
    image = read(png, "image/png", "big.png", limits=ExtractLimits(max_image_bytes=1000))
    assert image.kind == "image" and image.image_bytes is None and "2000×2000 pixels" in image.text
    assert "only its description is given" in notes(image)


# -- the hostile set for end-to-end suites -----------------------------------------------------------------------

_EXPECTED = {
    "zip bomb docx": "DOCX: word/document.xml inflates to 64.0 MB; at most its first 32.0 MB are read",
    "billion laughs docx": "the XML declares a DTD (entities are never expanded here)",
    "encrypted pdf": "encrypted PDF: it needs a password to open, so its text cannot be read",
    "10,000-page pdf": "",
    "1,000-sheet xlsx": "",
    "12,000-entry zip": "the archive lists 12,000 entries (more than 10,000 are not opened)",
    "truncated docx": "DOCX: the file could not be (fully) read (BadZipFile",
    "truncated pdf": "PDF: the file is damaged",
    "png labelled pdf": "declared as application/pdf, but the content is an image/png image",
}


def test_the_hostile_set_for_end_to_end_suites_gets_clear_bounded_answers():
    cases = hostile_attachments()
    assert set(cases) == set(_EXPECTED)
    for case, (data, mime_type, filename) in cases.items():
        clock = TickClock()
        result = extract_attachment(data, mime_type=mime_type, filename=filename, max_chars=20_000, clock=clock)
        assert handled(result) and len(result.text) <= 20_000 and clock.calls < 100, case
        assert _EXPECTED[case] in notes(result), (case, result.notes)
        assert result.text or result.notes, case
