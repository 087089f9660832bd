"""PPTX: each slide's text under a "--- slide N ---" line, in presentation order; table rows as "a | b | c".

Slides come from ppt/presentation.xml's slide list and its relationships. Speaker notes, masters and layouts
(placeholder prompts) are not read. At most `max_pages` slides.
"""

from __future__ import annotations

from collections.abc import Iterable

from server.content.extract.model import Job, clip
from server.content.extract.ooxml import Package
from server.content.extract.xmlsafe import END, START, TEXT, Event

_MAIN = (
    "presentationml.presentation.main+xml",
    "presentationml.slideshow.main+xml",
    "presentation.macroenabled.main+xml",
)
_CHECK_EVERY = 4096


def extract_pptx(data: bytes, job: Job) -> None:
    package = Package(data, job, "PPTX")
    main = package.main_part(_MAIN, "ppt/presentation.xml")
    ids = [
        attrs.get("id", "")
        for kind, name, attrs in package.events(main)
        if kind == START and name == "sldId" and isinstance(attrs, dict)
    ]
    rels = package.relationships(main)
    slides = [rels[rel_id][1] for rel_id in ids if rel_id in rels]
    job.pages = len(slides)
    if not slides:
        job.note("PPTX: the presentation lists no slides")
        return
    limit = min(len(slides), max(job.limits.max_pages, 0))
    for index, path in enumerate(slides[:limit]):
        if package.exhausted or not job.proceed(f"PPTX slide {index + 1} of {len(slides):,}"):
            return
        if not job.write(f"--- slide {index + 1} ---\n"):
            return
        _slide(package.tolerant_events(path), job)
        if not job.write("\n"):
            return
    if limit < len(slides) and not job.timed_out:
        job.cut(f"PPTX: only the first {limit:,} of {len(slides):,} slides were read (slide limit)")


def _slide(events: Iterable[Event], job: Job) -> None:
    paragraph: list[str] = []
    row: list[str] | None = None
    cell: list[str] | None = None
    in_text = False
    for count, (kind, name, value) in enumerate(events):
        if count % _CHECK_EVERY == 0 and count and not job.proceed("PPTX slide text"):
            return
        if kind == TEXT:
            if in_text:
                paragraph.append(str(value))
        elif kind == START:
            if name == "t":
                in_text = True
            elif name == "br":
                paragraph.append("\n")
            elif name == "tr":
                row = []
            elif name == "tc":
                cell = []
        elif kind == END:
            if name == "t":
                in_text = False
            elif name == "p":
                text = "".join(paragraph).strip()
                paragraph = []
                if text and cell is not None:
                    cell.append(" ".join(text.split()))
                elif text and not job.write(text + "\n"):
                    return
            elif name == "tc" and row is not None and cell is not None:
                row.append(clip(" ".join(cell).replace("|", "\\|"), job.limits.max_cell_chars))
                cell = None
            elif name == "tr" and row is not None:
                while row and not row[-1]:
                    row.pop()
                if row and not job.write(" | ".join(row[: job.limits.max_columns]) + "\n"):
                    return
                row = None
