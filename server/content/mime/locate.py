"""Finding one attachment of a parsed message by what a caller knows of it: its part id or its file name.

Gmail's `attachmentId` changes between two fetches of a message, so attachments are addressed by message id and
`partId` (stable: it is the part's position in the MIME tree), or by file name when that is unique. Pure.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from server.content.mime.part import MimePart
from server.content.mime.walk import AttachmentInfo

MAX_DEPTH = 100


@dataclass(frozen=True)
class Located:
    """The attachment asked for, with its bytes when the message carries them inline (small parts)."""

    info: AttachmentInfo
    content_type: str  # the part's Content-Type header (charset parameter included), else its MIME type
    inline_data: bytes | None  # None: fetch with attachments.get(info.attachment_id)


class AttachmentChoiceError(ValueError):
    """No attachment, or more than one, matches; `candidates` are the ones worth naming in the answer."""

    def __init__(self, message: str, candidates: Sequence[AttachmentInfo]) -> None:
        super().__init__(message)
        self.candidates = tuple(candidates)


def choose(attachments: Sequence[AttachmentInfo], wanted: str) -> AttachmentInfo:
    """The attachment whose part id is `wanted`, else the one whose file name is (exactly, then ignoring case).

    Raises:
        AttachmentChoiceError: nothing matches, or a file name matches several parts.
    """
    wanted = wanted.strip()
    for item in attachments:
        if item.part_id == wanted:
            return item
    matchers: tuple[Callable[[str], bool], ...] = (
        lambda name: name == wanted,
        lambda name: name.casefold() == wanted.casefold(),
    )
    for same in matchers:
        matches = [item for item in attachments if same(item.filename)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise AttachmentChoiceError(f"{len(matches)} attachments are named {wanted!r}", matches)
    raise AttachmentChoiceError(f"the message has no attachment with part id or file name {wanted!r}", attachments)


def part_node(payload: object, part_id: str) -> dict[str, Any] | None:
    """The node of a Gmail payload tree with this `partId` (depth-first, bounded), or None."""
    stack: list[tuple[object, int]] = [(payload, 0)]
    visited = 0
    while stack and visited < 10_000:
        node, depth = stack.pop()
        visited += 1
        if not isinstance(node, dict) or depth > MAX_DEPTH:
            continue
        if node.get("partId") == part_id or (part_id == "" and depth == 0):
            return node
        children = node.get("parts")
        if isinstance(children, list):
            stack.extend((child, depth + 1) for child in reversed(children))
    return None


def locate(payload: object, attachments: Sequence[AttachmentInfo], wanted: str) -> Located:
    """The attachment `wanted` names (see `choose`), its declared Content-Type and any inline bytes."""
    info = choose(attachments, wanted)
    node = part_node(payload, info.part_id) or {}
    part = MimePart(node, info.mime_type)
    content_type = part.headers.get("content-type") or info.mime_type
    data = part.body.get("data")
    inline = None
    if isinstance(data, str) and data:
        try:
            inline = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
        except (binascii.Error, ValueError):
            inline = None
    return Located(info, content_type, inline)
