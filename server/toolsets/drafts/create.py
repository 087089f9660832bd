"""`gmail_create_draft`: a new message, reply, reply-all or forward, saved as a Gmail draft. Never sends.

A reply or forward names the original by its Gmail id; the threading is done here, from the original's own
headers (one `messages.get(format=raw)`): the thread id, `In-Reply-To` = its `Message-ID`, `References` = its
chain plus it, a `Re:`/`Fwd:` subject added once, reply-all recipients minus every send-as address of the
account, the original quoted (plain text, and HTML when the draft has an HTML body). A forward carries the
original's attachments. One `drafts.create`, never repeated (see `gmail/single_attempt.py`).

The draft is from one of the account's send-as identities (`sender.py`): the one asked for, else the address a
replied or forwarded original was sent to, else the default; its signature goes below the new text and above
the quote (`content/compose/signature.py`) unless `signature` is false. Files come from the attachment folder,
from the client (base64) or from other messages, the size limit checked before any download (`attach.py`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from server.content.compose.addresses import Recipient, dedupe
from server.content.compose.build import Attachment, MessageTooLargeError, OutgoingMessage, build_message
from server.content.compose.quoting import Quote, QuoteSource, forward_quote, reply_quote
from server.content.compose.reading import read_message
from server.content.compose.reply import (
    Mode,
    Original,
    forward_subject,
    reply_recipients,
    reply_subject,
    threading_for,
)
from server.content.compose.signature import signed
from server.content.message import parse_raw_message
from server.errors import InvalidInputError, NotFoundError
from server.tools import ToolContext
from server.toolsets.common import MESSAGE_ID_PATTERN, ToolInput, ToolOutput
from server.toolsets.drafts.attach import (
    MAX_CONTENT_ITEMS,
    MAX_FROM_MESSAGES,
    ContentAttachment,
    MessageAttachment,
    decode_content,
    from_messages,
)
from server.toolsets.drafts.common import (
    ADDRESS_FORM,
    AddressList,
    FileName,
    audited,
    from_line,
    how_to_send,
    own_addresses,
    raw_bytes,
    recipients,
    send_tool,
)
from server.toolsets.drafts.sender import choose_sender

MAX_BODY_CHARS = 200_000


class CreateDraftInput(ToolInput):
    mode: Literal["new", "reply", "reply_all", "forward"] | None = Field(
        None, description='Default "reply" with reply_to_message_id, else "new".'
    )
    reply_to_message_id: str | None = Field(
        None, pattern=MESSAGE_ID_PATTERN, description="Id of the message answered or forwarded."
    )
    to: AddressList = Field(default_factory=list, description=f"Recipients ({ADDRESS_FORM}); replies add them.")
    cc: AddressList = Field(default_factory=list)
    bcc: AddressList = Field(default_factory=list)
    subject: str | None = Field(None, max_length=1000, description="New messages and forwards only.")
    body: str = Field("", max_length=MAX_BODY_CHARS, description="Plain text; the original's quote is added.")
    body_html: str | None = Field(None, max_length=MAX_BODY_CHARS, description="Optional HTML version of body.")
    include_quote: bool = Field(True, description="Quote the original under a reply.")
    attachments: list[FileName] = Field(
        default_factory=list, max_length=20, description="File names in the person's attachment folder."
    )
    from_address: str | None = Field(
        None,
        max_length=320,
        description="One of the account's send-as addresses (gmail_list_drafts lists them under send_as); "
        "default: for a reply the address the original was sent to, else the account's default.",
    )
    signature: bool = Field(True, description="Add the sender's Gmail signature (above any quote).")
    attach_from_messages: list[MessageAttachment] = Field(
        default_factory=list, max_length=MAX_FROM_MESSAGES, description="Files of messages in the mailbox."
    )
    attach_content: list[ContentAttachment] = Field(
        default_factory=list, max_length=MAX_CONTENT_ITEMS, description="Files sent as base64 bytes."
    )

    @model_validator(mode="after")
    def _mode_fits(self) -> CreateDraftInput:
        if self.mode is None:
            self.mode = "reply" if self.reply_to_message_id else "new"
        if self.mode == "new" and self.reply_to_message_id:
            raise ValueError('reply_to_message_id is for mode "reply", "reply_all" or "forward"; drop it for "new"')
        if self.mode != "new" and not self.reply_to_message_id:
            raise ValueError(f'mode "{self.mode}" needs reply_to_message_id (the id of the original message)')
        if self.mode in ("reply", "reply_all") and self.subject is not None:
            raise ValueError(
                "a reply keeps the original's subject (so it stays in the conversation): leave subject out"
            )
        return self


class CreateDraftResult(ToolOutput):
    draft_id: str | None = None
    message_id: str | None = None
    thread_id: str | None = None
    mode: str
    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    from_address: str | None = Field(None, description="Who the draft is from (one of the send-as addresses).")
    mailbox: str | None = Field(None, description="The account's address.")
    signature_added: bool = False
    from_choices: list[str] = Field(default_factory=list, description="Other send-as addresses (from_address).")
    in_reply_to: str | None = None  # the original's Message-ID header
    attachments: list[str] = Field(default_factory=list)
    dry_run: bool = False
    sent: bool = False  # always: this tool never sends
    send_with: str | None = Field(None, description="The tool that sends this draft, when this server offers one.")
    notes: list[str] = Field(default_factory=list)


def _names(people: list[Recipient]) -> list[str]:
    return [str(person) for person in people]


def create_draft(ctx: ToolContext, args: CreateDraftInput) -> CreateDraftResult:
    mode: Mode = args.mode or "new"
    to, cc, bcc = recipients(args.to, "to"), recipients(args.cc, "cc"), recipients(args.bcc, "bcc")
    asked = choose_sender(ctx, args.from_address) if args.from_address else None  # refused before any fetch
    local = [ctx.safety.read_local_attachment(name) for name in args.attachments]
    attachments = [Attachment(item.name, item.mime_type, item.data) for item in local]
    attachments += decode_content(args.attach_content)
    notes: list[str] = []
    original_raw: bytes | None = None
    quote: Quote | None = None
    text, html = args.body, args.body_html
    subject = args.subject or ""
    in_reply_to: str | None = None
    references: tuple[str, ...] = ()
    thread_id: str | None = None
    if args.reply_to_message_id:
        original, content_text, raw = _original(ctx, args.reply_to_message_id)
        original_raw = raw
        threading = threading_for(original)
        in_reply_to, references, thread_id = threading.in_reply_to, threading.references, threading.thread_id
        if in_reply_to is None:
            notes.append("the original has no Message-ID header: the draft is kept in its thread by the thread id only")
        source = QuoteSource(
            sender=original.header("from"),
            date=original.header("date"),
            subject=original.header("subject"),
            to=original.header("to"),
            cc=original.header("cc"),
            text=content_text,
        )
        if mode == "forward":
            subject = args.subject or forward_subject(original.header("subject"))
            quote = forward_quote(source)
            kept = read_message(raw)
            attachments = [*kept.attachments, *attachments]
            if kept.left_out:
                notes.append(f"{kept.left_out} attachments of the original were left out (more than 100)")
        else:
            subject = reply_subject(original.header("subject"))
            derived = reply_recipients(original, mode, own_addresses(ctx))
            to, cc = dedupe([*derived.to, *to]), dedupe([*derived.cc, *cc])
            quote = reply_quote(source) if args.include_quote else None
    sender = asked or choose_sender(ctx, None, original_raw)
    if sender.why:
        notes.append(sender.why)
    signature = sender.signature(args.signature)
    text, html = signed(
        text, html, signature, plain_quote=quote.text if quote else "", html_quote=quote.html if quote else ""
    )
    attachments += from_messages(ctx, args.attach_from_messages, attachments, len(text) + len(html or ""))
    to, cc = dedupe(to), dedupe(cc, exclude=to)
    bcc = dedupe(bcc, exclude=[*to, *cc])
    if not (to or cc or bcc):
        notes.append("no recipients yet: add them with gmail_update_draft before sending")
    spec = OutgoingMessage(
        to=to,
        cc=cc,
        bcc=bcc,
        subject=subject,
        text=text,
        html=html,
        in_reply_to=in_reply_to,
        references=references,
        attachments=attachments,
        sender=sender.identity.sender if sender.identity is not None else None,
    )
    try:
        raw_message = build_message(spec)
    except MessageTooLargeError as error:
        raise InvalidInputError(f"The draft is too large: {error}.", hint="Attach fewer or smaller files.") from None
    result = CreateDraftResult(
        mode=mode,
        to=_names(to),
        cc=_names(cc),
        bcc=_names(bcc),
        subject=subject,
        from_address=sender.from_address,
        mailbox=sender.account,
        signature_added=signature is not None and signature.text_block in text,
        from_choices=[address for address in sender.choices if address != getattr(sender.identity, "email", None)],
        in_reply_to=in_reply_to,
        thread_id=thread_id,
        attachments=[item.filename for item in attachments],
        dry_run=ctx.safety.dry_run,
        send_with=send_tool(ctx),
        notes=notes,
    )
    everyone = [person.email for person in (*to, *cc, *bcc)]
    with audited(ctx, "gmail_create_draft", "drafts.create", recipients=everyone, mode=mode) as audit:
        if ctx.safety.dry_run:
            result.notes.append("dry run (GMAIL_MCP_DRY_RUN): nothing was saved")
            return result
        draft = ctx.gmail.create_draft(raw_message, thread_id=thread_id)
        message = draft["message"] if isinstance(draft.get("message"), dict) else {}
        result.draft_id = str(draft.get("id") or "") or None
        result.message_id = str(message.get("id") or "") or None
        result.thread_id = str(message.get("threadId") or thread_id or "") or None
        audit["ids"] = [value for value in (result.draft_id, result.message_id) if value]
    return result


def _original(ctx: ToolContext, message_id: str) -> tuple[Original, str, bytes]:
    """The original's headers (from its raw bytes: structured headers keep quoted names intact), its readable
    text (HTML converted, as gmail_get_message shows it) and its bytes."""
    try:
        resource = ctx.gmail.get_message(message_id, fmt="raw")
    except NotFoundError:
        raise NotFoundError(
            f"No message with id {message_id!r} to answer or forward.",
            hint="Take reply_to_message_id from gmail_search_messages.",
            status=404,
        ) from None
    raw = raw_bytes(resource, "the original message")
    parsed = parse_raw_message(resource)
    headers = read_message(raw).headers
    original = Original(
        gmail_id=str(resource.get("id") or message_id),
        thread_id=str(resource.get("threadId") or ""),
        headers=headers,
    )
    return original, parsed.body_text or "", raw


def render_created(result: CreateDraftResult) -> str:
    head = "Dry run: this draft would be saved" if result.dry_run else f"Draft saved (not sent): {result.draft_id}"
    lines = [head + (f" | thread {result.thread_id}" if result.thread_id else "")]
    lines.append(from_line(result.from_address, result.mailbox, result.signature_added))
    if result.from_choices:
        lines.append("Could also be from (from_address): " + ", ".join(result.from_choices))
    lines += [
        f"{name}: {', '.join(values)}"
        for name, values in (("To", result.to), ("Cc", result.cc), ("Bcc", result.bcc))
        if values
    ]
    lines.append(f"Subject: {result.subject or '(no subject)'}")
    if result.attachments:
        lines.append("Attachments: " + ", ".join(result.attachments))
    if result.in_reply_to:
        lines.append(f"In reply to {result.in_reply_to} (stays in the conversation)")
    lines.extend(f"Note: {note}" for note in result.notes)
    if result.draft_id:
        lines.append(how_to_send(result.send_with, result.draft_id))
    return "\n".join(lines)
