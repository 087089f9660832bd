"""Attachment extraction speed and output size (pure, in memory): a ~1 MB PDF, a 10,000-row XLSX and others.

    .venv/bin/python -m bench.extract_bench [--repeat 3]

Each file is built in memory by server/tests/support/attachments.py. Two readings per file: the first window a
tool would ask for (20,000 characters; extraction stops once it is full) and the whole text (max_chars
10,000,000; the default limits still apply, e.g. 5,000 rows per sheet, so the row cap is lifted for a second
XLSX line). The best of `--repeat` runs is reported.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from dataclasses import replace

if __package__ in (None, ""):  # a path run cannot import `bench`: say how to run it instead
    sys.exit("Run it from the checkout as a module: python -m bench.extract_bench")

from server.content.extract import DEFAULT_LIMITS, ExtractLimits, extract_attachment
from server.tests.support.attachments import build_docx, build_pdf, build_xlsx

MB = 1024 * 1024
WINDOW = 20_000


def sample_pdf(size: int = MB) -> bytes:
    """A text PDF of about `size` bytes: pages of 40 lines of prose, uncompressed content streams."""
    line = "The quarterly figures show steady growth in every region, with costs held flat. "
    page = "\n".join(f"{n:02d}. {line}" for n in range(40))
    pages = max(size // (len(page) + 300), 1)
    return build_pdf([f"Page {n + 1}\n{page}" for n in range(pages)], title="Quarterly report")


def sample_xlsx(rows: int = 10_000) -> bytes:
    start = dt.date(2024, 1, 1)
    table = [["Order", "Customer", "Amount", "Paid", "Date"]]
    table += [
        [f"SO-{n:05d}", f"Customer {n % 250}", round(n * 1.37, 2), n % 3 == 0, start + dt.timedelta(days=n % 365)]
        for n in range(rows)
    ]
    return build_xlsx({"Orders": table})


def best(run, repeat: int) -> tuple[float, object]:
    fastest, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = run()
        fastest = min(fastest, time.perf_counter() - started)
    return fastest * 1000, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the best is reported")
    args = parser.parse_args(argv)
    files = [
        ("PDF, text, ~1 MB", sample_pdf(), "application/pdf", "report.pdf", DEFAULT_LIMITS),
        ("XLSX, 10,000 rows x 5 columns", sample_xlsx(), "application/octet-stream", "orders.xlsx", DEFAULT_LIMITS),
        (
            "  same, row cap lifted",
            sample_xlsx(),
            "application/octet-stream",
            "orders.xlsx",
            replace(DEFAULT_LIMITS, max_rows=100_000),
        ),
        ("DOCX, 2,000 paragraphs", build_docx([f"Paragraph {n}. " * 8 for n in range(2000)]), "", "a.docx", None),
    ]
    print(f"Python {sys.version.split()[0]}; best of {args.repeat} runs; window = first {WINDOW:,} characters\n")
    print(f"{'file':<32} {'input':>9} {'window ms':>10} {'whole ms':>9} {'whole text':>12} {'pages/sheets':>13}")
    for name, data, mime_type, filename, limits in files:
        limits = limits or ExtractLimits()
        window_ms, _ = best(
            lambda d=data, m=mime_type, f=filename, lim=limits: extract_attachment(
                d, mime_type=m, filename=f, max_chars=WINDOW, limits=lim
            ),
            args.repeat,
        )
        whole_ms, whole = best(
            lambda d=data, m=mime_type, f=filename, lim=limits: extract_attachment(
                d, mime_type=m, filename=f, max_chars=10_000_000, limits=lim
            ),
            args.repeat,
        )
        shape = f"{whole.pages} pages" if whole.pages else f"{len(whole.sheets)} sheets" if whole.sheets else "-"
        size = f"{len(whole.text.encode()) / 1024:,.0f} KB"
        print(f"{name:<32} {len(data) / MB:>7.2f}MB {window_ms:>10.1f} {whole_ms:>9.1f} {size:>12} {shape:>13}")
        for note in whole.notes:
            print(f"{'':<32} note: {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
