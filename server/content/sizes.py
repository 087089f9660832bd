"""The one way this server writes a size for a person: "812 bytes", "12.3 KB", "4.5 MB" (1 KB = 1024 bytes)."""

from __future__ import annotations

KB = 1024
MB = 1024 * KB
GB = 1024 * MB


def human_size(size: int) -> str:
    """'812 bytes', '12.3 KB', '4.5 MB', '4.0 GB'; a size that would round up to the next unit is written in it."""
    if size < KB:
        return "1 byte" if size == 1 else f"{size:,} bytes"
    for unit, name in ((MB, "KB"), (GB, "MB")):
        if round(size / (unit // KB), 1) < KB:
            return f"{size / (unit // KB):.1f} {name}"
    return f"{size / GB:,.1f} GB"
