"""Files for a draft from three places, with Gmail's size limit checked before anything is fetched or uploaded.

1. A file of a message in the mailbox (`attach_from_messages`), named as `gmail_read_attachment` names it: a
   part id, or a file name unique in that message. One `messages.get(full)` per message finds the parts and their
   sizes; then one `attachments.get` per file (none for a small part whose bytes ride inline). The bytes go
   straight into the new MIME part, with the original's file name and type: nothing touches the disk.
2. Bytes the client sends (`attach_content`, base64, checked strictly): for remote use, where the server cannot
   see the person's files.
3. Files of the attachment folder (`GMAIL_MCP_ATTACH_DIR`), as before.

Gmail takes at most 25 MB per message, attachments counted once encoded (base64 adds a third). The total is
reckoned from what is known before any download (the sizes Gmail lists for a message's parts), so a draft that
cannot fit is refused before the first `attachments.get` and before any upload, naming the total and the limit.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from server.content.compose.build import MAX_MESSAGE_BYTES, Attachment
from server.content.message import parse_message
from server.content.mime.locate import AttachmentChoiceError, Located, locate
from server.content.sizes import human_size
from server.content.text.charsets import lenient_b64
from server.errors import InvalidInputError, NotFoundError
from server.tools import ToolContext
from server.toolsets.common import MESSAGE_ID_PATTERN, ToolInput

MAX_FROM_MESSAGES = 20
MAX_CONTENT_ITEMS = 10
MAX_CONTENT_B64_CHARS = 35_000_000  # 25 MB of bytes, encoded: one item may not be larger than a whole message
HEADROOM_BYTES = 16 * 1024  # headers and MIME boundaries around the parts
TOO_LARGE_HINT = (
    "Attach fewer or smaller files (a large file is better shared as a link), or split them over several drafts."
)


class MessageAttachment(ToolInput):
    message_id: str = Field(pattern=MESSAGE_ID_PATTERN, description="The message the file is attached to.")
    attachment: str = Field(
        min_length=1, max_length=500, description="Its part_id (or file name), as gmail_read_attachment takes it."
    )


class ContentAttachment(ToolInput):
    filename: str = Field(min_length=1, max_length=255)
    mime_type: str = Field(
        "application/octet-stream", max_length=255, pattern=r"^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+$"
    )
    data_base64: str = Field(max_length=MAX_CONTENT_B64_CHARS, description="The file's bytes, base64.")


def encoded_size(size: int) -> int:
    """Bytes a part of `size` bytes takes in the message: base64 (4 for 3) in lines of 76 plus CRLF."""
    encoded = -(-size // 3) * 4
    return encoded + 2 * -(-encoded // 76)


def decode_content(items: Sequence[ContentAttachment]) -> list[Attachment]:
    """The client's files as attachments; a value that is not base64 is refused, naming the file. Files that
    could not fit in one message together are refused before any is decoded (their size read off the text)."""
    check_total([], [(item.filename, len(item.data_base64) * 3 // 4) for item in items], 0)
    found = []
    for item in items:
        text = "".join(item.data_base64.split()).replace("-", "+").replace("_", "/")
        try:
            data = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInputError(
                f"attach_content: {item.filename[:200]!r} is not valid base64.",
                hint="Send the file's bytes base64-encoded (standard or URL-safe alphabet) in data_base64.",
            ) from None
        found.append(Attachment(item.filename, item.mime_type, data))
    return found


@dataclass(frozen=True)
class _Wanted:
    message_id: str
    found: Located


def _locate_all(ctx: ToolContext, refs: Sequence[MessageAttachment]) -> list[_Wanted]:
    """One messages.get(full) per distinct message; each named file located in it (nothing downloaded yet)."""
    resources: dict[str, dict[str, object]] = {}
    wanted = []
    for ref in refs:
        if ref.message_id not in resources:
            try:
                resources[ref.message_id] = ctx.gmail.get_message(ref.message_id, fmt="full")
            except NotFoundError:
                raise NotFoundError(
                    f"attach_from_messages: no message with id {ref.message_id!r}.",
                    hint="Take message ids from gmail_search_messages and part ids from gmail_get_message.",
                    status=404,
                ) from None
        resource = resources[ref.message_id]
        try:
            found = locate(resource.get("payload"), parse_message(resource).attachments, ref.attachment)
        except AttachmentChoiceError as error:
            names = ", ".join(f"{item.part_id} ({item.filename})" for item in error.candidates[:20]) or "none"
            raise InvalidInputError(
                f"attach_from_messages: {error} (message {ref.message_id}).",
                hint=f"Its attachments (part id and name): {names}.",
            ) from None
        wanted.append(_Wanted(ref.message_id, found))
    return wanted


def check_total(known: Sequence[Attachment], listed: Sequence[tuple[str, int]], body_chars: int) -> None:
    """Refuses a draft whose encoded size would pass Gmail's limit: `known` files have their bytes, `listed`
    ones are (name, size) as Gmail lists them, not fetched yet."""
    files = [(item.filename, len(item.data)) for item in known] + list(listed)
    total = HEADROOM_BYTES + 2 * body_chars + sum(encoded_size(size) for _name, size in files)
    if total <= MAX_MESSAGE_BYTES:
        return
    largest = sorted(files, key=lambda pair: -pair[1])[:5]
    listing = ", ".join(f"{name} {human_size(size)}" for name, size in largest)
    raw_total = sum(size for _name, size in files)
    raise InvalidInputError(
        f"The draft is too large: its {len(files)} attachment{'s' if len(files) != 1 else ''} total "
        f"{human_size(raw_total)} ({listing}), about "
        f"{human_size(total)} once encoded, and Gmail takes at most {human_size(MAX_MESSAGE_BYTES)} per message "
        "including the encoding overhead. Nothing was fetched or saved.",
        hint=TOO_LARGE_HINT,
    )


def from_messages(
    ctx: ToolContext, refs: Sequence[MessageAttachment], known: Sequence[Attachment], body_chars: int
) -> list[Attachment]:
    """The files named in `refs`, fetched only once the whole draft (with the `known` files) is known to fit."""
    wanted = _locate_all(ctx, refs) if refs else []
    listed = [(item.found.info.filename, max(item.found.info.size, 0)) for item in wanted]
    check_total(known, listed, body_chars)
    attachments = []
    for item in wanted:
        info = item.found.info
        if item.found.inline_data is not None:
            data = item.found.inline_data
        elif info.attachment_id:
            answer = ctx.gmail.get_attachment(item.message_id, info.attachment_id)
            encoded = answer.get("data")
            data = lenient_b64(encoded) if isinstance(encoded, str) else b""
        else:
            data = b""
        mime_type = info.mime_type or "application/octet-stream"
        attachments.append(Attachment(info.filename or "attachment", mime_type, data))
    return attachments
