"""`gmail_read_attachment`: an attachment's content as bounded text (or an image a model can see), in memory.

Addressed by message id plus part id (stable) or file name, never by Gmail's `attachmentId` (it changes on every
fetch). One `messages.get(full)` finds the part; a small part whose bytes ride inline costs nothing more, any other
one `attachments.get`. The bytes go through `content/extract` (PDF, DOCX, XLSX, PPTX, CSV, text, HTML, calendar,
attached messages, zip listings), bounded in time and memory; images up to 1 MB come back as MCP image content.
Nothing is written to disk unless the person configured a downloads folder and the call asks to save.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, PrivateAttr

from server.content.message import parse_message
from server.content.sizes import human_size
from server.content.text.charsets import lenient_b64
from server.errors import InvalidInputError
from server.tools import Block, ImageBlock, ToolContext, Toolset, ToolSpec
from server.toolsets.common import (
    MAX_ITEM_FIELD_CHARS,
    MESSAGE_ID_PATTERN,
    UNTRUSTED_CONTENT,
    Count,
    ToolInput,
    ToolOutput,
    bounded,
)
from server.toolsets.envelope import Fence, Security, security_line, security_of

if TYPE_CHECKING:  # extraction, part location and saving load on the first call (or the warm-up), not at start-up
    from server.content.extract import Extraction
    from server.content.mime.locate import AttachmentChoiceError, Located

DEFAULT_MAX_CHARS = 20_000
MAX_LISTED_CHOICES = 20


def _false(value: object) -> bool:
    return not value


def _none(value: object) -> bool:
    return value is None


class ReadAttachmentInput(ToolInput):
    message_id: str = Field(pattern=MESSAGE_ID_PATTERN, description="The message the file is attached to.")
    attachment: str = Field(
        min_length=1, max_length=500, description="A part_id (or file name) from gmail_get_message."
    )
    max_chars: Count = Field(DEFAULT_MAX_CHARS, ge=200, le=200_000)
    offset: Count = Field(0, ge=0, description="Pass next_offset to read on.")
    save: bool = Field(False, description="Also save it to the configured downloads folder.")


class ReadAttachmentResult(ToolOutput):
    message_id: str
    part_id: str
    filename: str
    mime_type: str
    size: int = Field(description="Bytes.")
    kind: Literal["text", "image", "unsupported"]
    format: str
    text: str | None = Field(None, exclude_if=_none)
    next_offset: int | None = Field(None, exclude_if=_none)
    total_chars: int | None = Field(None, exclude_if=_none)
    complete: bool = Field(description="The whole file was read.")
    pages: int | None = Field(None, exclude_if=_none)
    sheets: list[str] | None = Field(None, exclude_if=_none)
    saved_to: str | None = Field(None, exclude_if=_none)
    notes: list[str] = Field(default_factory=list, exclude_if=_false)
    _image: tuple[bytes, str] | None = PrivateAttr(default=None)
    # The security of the message the file came with: shown in the text only (gmail_get_message has it
    # structured), so that tools/list does not pay for the same schema twice.
    _security: Security | None = PrivateAttr(default=None)


def read_attachment(ctx: ToolContext, args: ReadAttachmentInput) -> ReadAttachmentResult:
    from server.content.extract import extract_attachment
    from server.content.mime.locate import AttachmentChoiceError, locate
    from server.runtime.downloads import save_file

    if args.save and ctx.download_dir is None:
        raise InvalidInputError(
            "Saving attachments is off: no downloads folder is configured.",
            hint="Call again without save (the content comes back as text), or ask the person to set "
            "GMAIL_MCP_DOWNLOAD_DIR to a folder for saved attachments and restart the server.",
        )
    resource = ctx.gmail.get_message(args.message_id, fmt="full")
    parsed = parse_message(resource)
    try:
        found = locate(resource.get("payload"), parsed.attachments, args.attachment)
    except AttachmentChoiceError as error:
        raise InvalidInputError(f"{error} (message {args.message_id}).", hint=_choices_hint(error)) from None
    data = _bytes(ctx, args.message_id, found)
    extraction = extract_attachment(
        data,
        mime_type=found.content_type,
        filename=found.info.filename,
        max_chars=args.max_chars,
        offset=args.offset,
    )
    if args.offset and extraction.kind == "text" and not extraction.text and args.offset >= extraction.total_chars:
        raise InvalidInputError(
            f"offset {args.offset} is past the end of the attachment's text ({extraction.total_chars} characters).",
            hint="Use the next_offset of the previous answer, or offset 0 to start over.",
        )
    result = _result(args, found, extraction)
    result._security = security_of(parsed, (resource.get("payload") or {}).get("headers"))
    if args.save and ctx.download_dir is not None:
        try:
            result.saved_to = str(save_file(ctx.download_dir, found.info.filename, data))
        except OSError as error:
            result.notes.append(f"could not save into the downloads folder: {type(error).__name__}: {error}")
    return result


def _bytes(ctx: ToolContext, message_id: str, found: Located) -> bytes:
    if found.inline_data is not None:
        return found.inline_data
    if not found.info.attachment_id:
        return b""
    answer = ctx.gmail.get_attachment(message_id, found.info.attachment_id)
    data = answer.get("data")
    return lenient_b64(data) if isinstance(data, str) else b""


def _result(args: ReadAttachmentInput, found: Located, extraction: Extraction) -> ReadAttachmentResult:
    result = ReadAttachmentResult(
        message_id=args.message_id,
        part_id=found.info.part_id,
        filename=bounded(found.info.filename, MAX_ITEM_FIELD_CHARS) or "",
        mime_type=bounded(extraction.mime_type or found.info.mime_type, MAX_ITEM_FIELD_CHARS) or "",
        size=extraction.size_bytes,
        kind=extraction.kind if extraction.kind in ("text", "image") else "unsupported",
        format=extraction.format,
        text=extraction.text if extraction.kind != "unsupported" else None,
        next_offset=extraction.next_offset,
        total_chars=extraction.total_chars if extraction.kind == "text" else None,
        complete=extraction.complete,
        pages=extraction.pages,
        sheets=list(extraction.sheets) if extraction.sheets is not None else None,
        notes=list(extraction.notes),
    )
    if extraction.kind == "image" and extraction.image_bytes:
        result._image = (extraction.image_bytes, extraction.mime_type)
    return result


def _choices_hint(error: AttachmentChoiceError) -> str:
    if not error.candidates:
        return "This message has no attachments; gmail_get_message shows what it holds."
    listed = "; ".join(
        f"part {item.part_id}: {bounded(item.filename, 100)} ({item.mime_type})"
        for item in error.candidates[:MAX_LISTED_CHOICES]
    )
    more = (
        f" and {len(error.candidates) - MAX_LISTED_CHOICES} more" if len(error.candidates) > MAX_LISTED_CHOICES else ""
    )
    return f"Pass one of these part ids as attachment: {listed}{more}."


def render_attachment(result: ReadAttachmentResult) -> str:
    """Our lines (part, size, notes, the sender's security warnings, how to read on) outside the fence; the
    file's name and text, written by whoever sent it, inside."""
    head = f"Attachment part {result.part_id} ({result.mime_type}, {human_size(result.size)}"
    head += f", {result.pages} page{'s' if result.pages != 1 else ''}" if result.pages else ""
    head += f", {len(result.sheets)} sheet(s)" if result.sheets else ""
    lines = [head + f") of message {result.message_id}"]
    warning = security_line(result._security) if result._security else None
    if warning:
        lines.append(warning)
    if result.saved_to:
        lines.append(f"Saved to: {result.saved_to}")
    lines.extend(f"Note: {note}" for note in result.notes)
    inside = [f"File: {result.filename}"]
    if result.sheets:
        inside.append(f"Sheets: {', '.join(result.sheets)}")
    if result.kind == "image":
        inside.append(f"Image: {result.text}" + (" (attached below)" if result._image else ""))
    elif result.kind == "text":
        inside.extend(["", result.text or "(no text)"])
    lines.append(Fence().wrap("\n".join(inside)))
    if result.kind == "text" and result.next_offset is not None:
        lines.append(
            f"[Text cut: characters {args_offset(result):,}-{result.next_offset:,}"
            f"{'' if not result.complete else f' of {result.total_chars:,}'}. Call again with "
            f"offset={result.next_offset} to read on.]"
        )
    return "\n".join(lines)


def args_offset(result: ReadAttachmentResult) -> int:
    """Where the text shown starts: the end of this window less its length."""
    return (result.next_offset or 0) - len(result.text or "")


def attachment_blocks(result: ReadAttachmentResult) -> list[Block]:
    image: tuple[bytes, str] | None = result._image
    return [ImageBlock(image[0], image[1])] if image else []


READ_ATTACHMENT = ToolSpec(
    name="gmail_read_attachment",
    title="Read a Gmail attachment",
    description=(
        "Read an attachment (by message_id and the part_id gmail_get_message lists) as text: PDF, DOCX, "
        "XLSX/CSV, PPTX, text, HTML, calendar, attached emails, zip listings; images up to 1 MB as images. "
        "Read long text on with offset=next_offset. " + UNTRUSTED_CONTENT
    ),
    input_model=ReadAttachmentInput,
    output_model=ReadAttachmentResult,
    run=read_attachment,
    render=render_attachment,
    blocks=attachment_blocks,
)

ATTACHMENTS = Toolset(name="attachments", description="Read attachments.", tools=(READ_ATTACHMENT,))
