"""Streaming XML events for Office parts, on the stdlib expat parser with DTDs refused outright.

Office Open XML parts never carry a document type declaration, so any DTD (the vehicle of entity expansion
"billion laughs" and external entities) is refused before its first declaration is read: no entity is ever
defined, so none can expand. Events come chunk by chunk from a stream, so memory stays bounded by the chunk
size plus what the caller keeps. Pure, no I/O beyond the stream given.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NoReturn, Protocol
from xml.parsers import expat

START, END, TEXT = 0, 1, 2
CHUNK = 64 * 1024

Event = tuple[int, str, object]  # (START, name, attrs) | (END, name, None) | (TEXT, "", text)


class XmlRefused(ValueError):
    """The XML declares a DTD or entities; it is not parsed."""


def _refuse(*_args: object) -> NoReturn:
    raise XmlRefused("the XML declares a DTD (entities are never expanded here)")


def _local(name: str) -> str:
    return name.rpartition("}")[2]


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def xml_events(stream: Readable) -> Iterator[Event]:
    """Parse XML from `stream`, yielding (kind, local name, attributes or text) events in document order.

    Element and attribute names lose their namespace ("w:p" gives "p"; Office part vocabularies do not clash).

    Raises:
        XmlRefused: A DOCTYPE, entity declaration or external entity reference.
        xml.parsers.expat.ExpatError: Malformed or truncated XML (events before the error are yielded first).
    """
    events: list[Event] = []
    parser = expat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.UnparsedEntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def start(name: str, attrs: dict[str, str]) -> None:
        events.append((START, _local(name), {_local(key): value for key, value in attrs.items()} if attrs else {}))

    def end(name: str) -> None:
        events.append((END, _local(name), None))

    def text(data: str) -> None:
        events.append((TEXT, "", data))

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    while True:
        chunk = stream.read(CHUNK)
        failure: Exception | None = None
        try:
            parser.Parse(chunk, not chunk)
        except (expat.ExpatError, XmlRefused) as exc:
            failure = exc
        yield from events
        events.clear()
        if failure is not None:
            raise failure
        if not chunk:
            return
