"""Zip archives: a listing of entry names and sizes. Nothing is ever inflated or extracted."""

from __future__ import annotations

from server.content.extract.model import Job, clip
from server.content.extract.zipcheck import open_zip
from server.content.sizes import human_size


def extract_zip(data: bytes, job: Job) -> None:
    with open_zip(data, job.limits.max_zip_entries) as archive:
        entries = archive.infolist()
    total = sum(entry.file_size for entry in entries)
    encrypted = sum(1 for entry in entries if entry.flag_bits & 0x1)
    header = f"Zip archive: {len(entries):,} entries, {human_size(total)} when extracted (contents not extracted)"
    if encrypted:
        header += f"; {encrypted:,} encrypted"
    if not job.write(header + "\n"):
        return
    limit = min(len(entries), max(job.limits.max_listed_entries, 0))
    for index, entry in enumerate(entries[:limit]):
        if index % 256 == 0 and not job.proceed(f"zip entry {index + 1:,} of {len(entries):,}"):
            return
        name = clip(" ".join(entry.filename.split()), 300)
        size = "" if entry.is_dir() else f"  ({human_size(entry.file_size)})"
        lock = "  [encrypted]" if entry.flag_bits & 0x1 else ""
        if not job.write(f"{name}{size}{lock}\n"):
            return
    if limit < len(entries):
        job.cut(f"zip: only the first {limit:,} of {len(entries):,} entries are listed")
