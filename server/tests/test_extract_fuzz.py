"""Corrupt, truncated, mutated and arbitrary bytes with any label: always an Extraction from a handler (never an
exception, never the last line of defence), and within the requested window.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.content.extract import Extraction, extract_attachment
from server.tests.support.attachments import build_docx, build_pdf, build_png, build_pptx, build_xlsx, zip_parts
from server.tests.support.properties import examples
from server.tests.test_extract_hostile import handled, notes, read

# -- corrupt and truncated files of every type -------------------------------------------------------------------

_SAMPLES = {
    "pdf": (lambda: build_pdf(["alpha", "beta"]), "application/pdf", "PDF"),
    "docx": (lambda: build_docx(["alpha", ("table", [["a", "b"]])]), "application/octet-stream", "DOCX"),
    "xlsx": (lambda: build_xlsx({"S": [["alpha", 1]]}), "application/octet-stream", "XLSX"),
    "pptx": (lambda: build_pptx([["alpha"]]), "application/octet-stream", "PPTX"),
    "zip": (lambda: zip_parts({"a.txt": "alpha"}), "application/zip", "zip"),
    "png": (lambda: build_png(), "image/png", ""),
    "eml": (lambda: b"From: a@b\r\nSubject: s\r\nContent-Type: text/html\r\n\r\n<p>alpha", "message/rfc822", ""),
    "csv": (lambda: b'a,"b\n1,2', "text/csv", ""),
}


@pytest.mark.parametrize("kind", sorted(_SAMPLES))
@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9])
def test_truncated_files_get_an_answer_naming_the_format(kind, cut):
    maker, mime_type, label = _SAMPLES[kind]
    data = maker()
    result = read(data[: int(len(data) * cut)], mime_type, f"file.{kind}")
    assert isinstance(result, Extraction) and result.kind in ("text", "image", "unsupported")
    if result.kind == "text" and not result.text:
        assert result.notes and (not label or label in notes(result) or "cannot be read" in notes(result))


@pytest.mark.parametrize("kind", sorted(_SAMPLES))
def test_corrupted_bytes_never_escape_as_exceptions(kind):
    maker, mime_type, _ = _SAMPLES[kind]
    data = bytearray(maker())
    for position in range(len(data) // 3, len(data), max(len(data) // 40, 1)):
        broken = bytes(data[:position]) + bytes([data[position] ^ 0x5A]) + bytes(data[position + 1 :])
        assert handled(read(broken, mime_type, f"f.{kind}", max_chars=500))


_MIME_TYPES = st.sampled_from(
    [
        "application/octet-stream",
        "application/pdf",
        "application/zip",
        "text/plain; charset=utf-16",
        "text/html",
        "text/csv",
        "text/calendar",
        "message/rfc822",
        "image/png",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "",
        "garbage;;;=",
    ]
)
_PREFIXES = st.sampled_from([b"", b"%PDF-1.7\n", b"PK\x03\x04", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a"])


@given(
    prefix=_PREFIXES,
    body=st.binary(max_size=600),
    mime_type=_MIME_TYPES,
    filename=st.sampled_from(["", "a.pdf", "b.docx", "c.xlsx", "d.csv", "e.ics", "f.eml", "g", "h.zip", "i.png"]),
    max_chars=st.integers(min_value=-5, max_value=300),
    offset=st.integers(min_value=-5, max_value=400),
)
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_arbitrary_bytes_with_any_label_never_raise(prefix, body, mime_type, filename, max_chars, offset):
    data = prefix + body
    result = extract_attachment(data, mime_type=mime_type, filename=filename, max_chars=max_chars, offset=offset)
    assert result.kind in ("text", "image", "unsupported")
    assert len(result.text) <= max(max_chars, 1) or result.kind == "image"
    assert result.next_offset is None or result.next_offset == result.offset + len(result.text)
    assert all(isinstance(note, str) and note for note in result.notes) and handled(result)


@given(seed=st.binary(min_size=4, max_size=40), kind=st.sampled_from(sorted(_SAMPLES)))
@settings(max_examples=examples(0.4), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mutated_documents_never_raise(seed, kind):
    maker, mime_type, _ = _SAMPLES[kind]
    data = bytearray(maker())
    for index in range(0, len(seed) - 1, 2):
        data[(seed[index] * 257 + seed[index + 1]) % len(data)] = seed[index] ^ seed[index + 1]
    assert handled(read(bytes(data), mime_type, f"f.{kind}", max_chars=200))
