"""Office Open XML packages (DOCX, XLSX, PPTX): bounded part reading, the main part, relationships. Pure.

Every part is inflated through a `CappedReader`: at most `max_part_bytes` per part and `max_inflated_bytes` for
the whole file, whatever the zip headers declare, so a part that inflates to gigabytes costs a bounded read.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from urllib.parse import unquote
from xml.parsers.expat import ExpatError

from server.content.extract.model import Job
from server.content.extract.xmlsafe import START, Event, xml_events
from server.content.extract.zipcheck import CappedReader, open_zip
from server.content.sizes import human_size


class Package:
    """One OOXML zip package, read for `job` (whose limits and notes it uses); `label` names it in notes."""

    def __init__(self, data: bytes, job: Job, label: str) -> None:
        self.job = job
        self.label = label
        self.zip = open_zip(data, job.limits.max_zip_entries)
        self._infos = {}
        for info in self.zip.infolist():
            self._infos.setdefault(info.filename.lstrip("/").lower(), info)
        self._budget_noted = False

    @property
    def exhausted(self) -> bool:
        """The inflation budget is spent: no more parts are read."""
        return self._budget_noted

    def has(self, path: str) -> bool:
        return path.lower() in self._infos

    def events(self, path: str) -> Iterator[Event]:
        """XML events of one part (nothing when absent); a part cut at the byte cap ends early with a note.

        Raises:
            XmlRefused: The part declares a DTD.
            ExpatError: The part is malformed (and was not cut).
        """
        info = self._infos.get(path.lower())
        if info is None or self._budget_noted:  # past the inflation budget nothing more is opened
            return
        cap = self.job.limits.max_part_bytes
        if info.file_size > cap:
            self.job.note(
                f"{self.label}: {path} inflates to {human_size(info.file_size)}; at most its first {human_size(cap)} "
                "are read"
            )
        with CappedReader(self.zip.open(info), cap, on_read=self._count) as reader:
            try:
                yield from xml_events(reader)
            except ExpatError:
                if not reader.cut:
                    raise
            if reader.cut:
                self.job.limited = True

    def _count(self, size: int) -> bool:
        self.job.inflated += size
        if self.job.inflated <= self.job.limits.max_inflated_bytes:
            return True
        if not self._budget_noted:
            self._budget_noted = True
            self.job.cut(
                f"{self.label}: the file inflates past {human_size(self.job.limits.max_inflated_bytes)}; "
                "reading stopped there"
            )
        return False

    def tolerant_events(self, path: str) -> Iterator[Event]:
        """`events`, with a broken part (malformed XML, a DTD, damaged deflate data) ending early with a note."""
        try:
            yield from self.events(path)
        except Exception as exc:  # zipfile and zlib raise several kinds on damaged members
            self.job.cut(f"{self.label}: {path} is unreadable past this point ({type(exc).__name__}: {exc})")

    def main_part(self, markers: tuple[str, ...], default: str) -> str:
        """The part [Content_Types].xml declares with a content type ending in one of `markers`, else `default`."""
        for kind, name, attrs in self.tolerant_events("[Content_Types].xml"):
            if kind == START and name == "Override" and isinstance(attrs, dict):
                content_type = attrs.get("ContentType", "").lower()
                part = attrs.get("PartName", "").lstrip("/")
                if part and content_type.endswith(markers) and self.has(part):
                    return part
        return default

    def relationships(self, part: str) -> dict[str, tuple[str, str]]:
        """{relationship id: (type's last path segment, target part path)} for a part; external targets skipped."""
        folder, name = posixpath.split(part)
        found: dict[str, tuple[str, str]] = {}
        for kind, tag, attrs in self.tolerant_events(posixpath.join(folder, "_rels", f"{name}.rels")):
            if kind != START or tag != "Relationship" or not isinstance(attrs, dict):
                continue
            if attrs.get("TargetMode", "").lower() == "external":
                continue
            target = unquote(attrs.get("Target", ""))
            if not target:
                continue
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            found.setdefault(attrs.get("Id", ""), (attrs.get("Type", "").rsplit("/", 1)[-1], path))
        return found
