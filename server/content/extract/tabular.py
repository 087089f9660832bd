"""CSV and TSV: rows as "a | b | c", the delimiter found from the first lines, at most `max_rows` rows."""

from __future__ import annotations

import csv
import io
from collections import Counter

from server.content.extract.model import Job, clip
from server.content.extract.textual import decode_prefix

_CANDIDATES = (",", ";", "\t", "|")
_SAMPLE_LINES = 30
_CHECK_EVERY = 512


def sniff_delimiter(text: str) -> str:
    """The candidate that splits the first lines into the same number of fields most consistently (default ",").

    Quotes are not parsed here: a linear count is enough to choose, and `csv` does the real splitting.
    """
    lines = [line for line in text[:65536].splitlines()[:_SAMPLE_LINES] if line.strip()]
    best, best_score = ",", (0.0, 0)
    for candidate in _CANDIDATES:
        counts = [line.count(candidate) for line in lines]
        if not counts:
            continue
        mode, hits = Counter(counts).most_common(1)[0]
        if mode == 0:
            continue
        score = (hits / len(counts), mode)
        if score > best_score:
            best, best_score = candidate, score
    return best


def extract_csv(data: bytes, job: Job) -> None:
    label = job.format.upper()
    text = decode_prefix(data, job, label).replace("\x00", "")
    delimiter = "\t" if job.format == "tsv" else sniff_delimiter(text)
    limits = job.limits
    rows = 0
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        for row in reader:
            if rows % _CHECK_EVERY == 0 and not job.proceed(f"{label} row {rows + 1:,}"):
                return
            cells = [clip(" ".join(cell.split()).replace("|", "\\|"), limits.max_cell_chars) for cell in row]
            while cells and not cells[-1]:
                cells.pop()
            if not cells:
                continue
            if rows >= limits.max_rows:
                lines = text.count("\n") + (0 if text.endswith("\n") else 1)
                job.cut(f"{label}: only the first {rows:,} rows were read (the file has about {lines:,} lines)")
                return
            if len(cells) > limits.max_columns:
                job.cut(f"{label}: columns past the first {limits.max_columns} were left out")
                cells = cells[: limits.max_columns]
            rows += 1
            if not job.write(" | ".join(cells) + "\n"):
                return
    except csv.Error as exc:
        job.note(f"{label}: unreadable after row {rows:,} ({exc})")
