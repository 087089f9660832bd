"""`gmail_update_draft`, `gmail_list_drafts`, `gmail_delete_draft`: editing, finding and removing drafts.

An update rewrites the draft from its current bytes with only the named parts replaced: recipients, subject,
body (the quoted original under it is kept), attachments added or removed. Threading headers and the thread id
stay, so an edited reply is still a reply. Updating changes the draft's content digest: a confirmation given
for the old content no longer sends it. The sender may change to another send-as identity; the signature this
server added is found again and replaced (the new sender's), kept, or taken off, never doubled.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from pydantic import Field

from server.content.compose.addresses import dedupe, lenient_recipients, split_address_list
from server.content.compose.build import Attachment, MessageTooLargeError, OutgoingMessage, build_message
from server.content.compose.quoting import split_quote
from server.content.compose.reading import read_message
from server.content.compose.signature import Signature, signed, split_signature
from server.content.compose.summary import summarize_draft
from server.content.message import header_value
from server.content.text.snippets import clean_snippet
from server.errors import InvalidInputError
from server.tools import ToolContext
from server.toolsets.common import MAX_ITEM_FIELD_CHARS, Count, ToolInput, ToolOutput, bounded
from server.toolsets.drafts.attach import (
    MAX_CONTENT_ITEMS,
    MAX_FROM_MESSAGES,
    ContentAttachment,
    MessageAttachment,
    decode_content,
    from_messages,
)
from server.toolsets.drafts.common import (
    DRAFT_ID_FIELD,
    AddressList,
    DraftHeaders,
    FileName,
    audited,
    fetch_draft,
    from_line,
    how_to_send,
    recipients,
    send_tool,
)
from server.toolsets.drafts.sender import draft_sender, send_as_choices

MAX_BODY_CHARS = 200_000
LIST_HEADERS = ("To", "Cc", "Subject", "Date")


class UpdateDraftInput(ToolInput):
    draft_id: str = DRAFT_ID_FIELD
    to: AddressList | None = Field(None, description="Given fields replace the draft's (to, cc, bcc, subject...).")
    cc: AddressList | None = None
    bcc: AddressList | None = None
    subject: str | None = Field(None, max_length=1000)
    body: str | None = Field(None, max_length=MAX_BODY_CHARS, description="New own text; a reply's quote stays.")
    body_html: str | None = Field(None, max_length=MAX_BODY_CHARS)
    add_attachments: list[FileName] = Field(default_factory=list, max_length=20, description="From the folder.")
    remove_attachments: list[FileName] = Field(default_factory=list, max_length=100, description="By name.")
    from_address: str | None = Field(None, max_length=320, description="Another of the send-as addresses.")
    signature: bool | None = Field(None, description="true adds the sender's signature, false removes it.")
    attach_from_messages: list[MessageAttachment] = Field(default_factory=list, max_length=MAX_FROM_MESSAGES)
    attach_content: list[ContentAttachment] = Field(default_factory=list, max_length=MAX_CONTENT_ITEMS)


class DraftResult(DraftHeaders):
    draft_id: str
    message_id: str | None = None
    thread_id: str | None = None
    from_address: str | None = Field(None, description="Who the draft is from (one of the send-as addresses).")
    mailbox: str | None = Field(None, description="The account's address.")
    attachments: list[str] = Field(default_factory=list)
    dry_run: bool = False
    sent: bool = False
    send_with: str | None = Field(None, description="The tool that sends this draft, when this server offers one.")
    notes: list[str] = Field(default_factory=list)


def _existing(header: str | None, notes: list[str], name: str) -> list[Any]:
    kept = lenient_recipients(header)
    if header and len(kept) < len(split_address_list(header)):
        notes.append(f"{name}: entries that are not valid addresses were dropped")
    return kept


def update_draft(ctx: ToolContext, args: UpdateDraftInput) -> DraftResult:
    draft, raw = fetch_draft(ctx, args.draft_id)
    message = draft["message"] if isinstance(draft.get("message"), dict) else {}
    thread_id = str(message.get("threadId") or "") or None
    current = read_message(raw)
    headers = current.headers
    notes: list[str] = []
    to = recipients(args.to, "to") if args.to is not None else _existing(headers.get("to"), notes, "to")
    cc = recipients(args.cc, "cc") if args.cc is not None else _existing(headers.get("cc"), notes, "cc")
    bcc = recipients(args.bcc, "bcc") if args.bcc is not None else _existing(headers.get("bcc"), notes, "bcc")
    senders = lenient_recipients(headers.get("from"))
    sender = draft_sender(ctx, args.from_address, senders[0].email if senders else None)
    text, html = _body(args, current.text, current.html, sender.signature, notes)
    missing = sorted(set(args.remove_attachments) - {item.filename for item in current.attachments})
    if missing:
        raise InvalidInputError(
            f"The draft has no attachment named {', '.join(repr(name) for name in missing)}.",
            hint="Attachments on it: " + (", ".join(item.filename for item in current.attachments) or "none") + ".",
        )
    attachments = [item for item in current.attachments if item.filename not in set(args.remove_attachments)]
    for name in args.add_attachments:
        local = ctx.safety.read_local_attachment(name)
        attachments.append(Attachment(local.name, local.mime_type, local.data))
    attachments += decode_content(args.attach_content)
    attachments += from_messages(ctx, args.attach_from_messages, attachments, len(text) + len(html or ""))
    if args.from_address or not senders:
        senders = [sender.identity.sender] if sender.identity is not None else []
    references = tuple(headers.get("references", "").split())
    spec = OutgoingMessage(
        to=dedupe(to),
        cc=dedupe(cc),
        bcc=dedupe(bcc),
        subject=args.subject if args.subject is not None else headers.get("subject", ""),
        text=text,
        html=html,
        in_reply_to=headers.get("in-reply-to") or None,
        references=references,
        attachments=attachments,
        sender=senders[0] if senders else None,
    )
    try:
        new_raw = build_message(spec)
    except MessageTooLargeError as error:
        raise InvalidInputError(f"The draft would be too large: {error}.") from None
    result = DraftResult(
        draft_id=args.draft_id,
        thread_id=thread_id,
        to=[str(person) for person in spec.to],
        cc=[str(person) for person in spec.cc],
        bcc=[str(person) for person in spec.bcc],
        subject=spec.subject,
        from_address=str(spec.sender) if spec.sender is not None else sender.from_address,
        mailbox=sender.account,
        attachments=[item.filename for item in attachments],
        dry_run=ctx.safety.dry_run,
        send_with=send_tool(ctx),
        notes=notes,
    )
    everyone = [person.email for person in (*spec.to, *spec.cc, *spec.bcc)]
    with audited(ctx, "gmail_update_draft", "drafts.update", ids=[args.draft_id], recipients=everyone):
        if ctx.safety.dry_run:
            result.notes.append("dry run (GMAIL_MCP_DRY_RUN): the draft was not changed")
            return result
        updated = ctx.gmail.update_draft(args.draft_id, new_raw, thread_id=thread_id)
        new_message = updated["message"] if isinstance(updated.get("message"), dict) else {}
        result.message_id = str(new_message.get("id") or "") or None
        result.thread_id = str(new_message.get("threadId") or thread_id or "") or None
    return result


def _body(
    args: UpdateDraftInput,
    text: str,
    html_part: str | None,
    signature_of: Callable[[bool], Signature | None],
    notes: list[str],
) -> tuple[str, str | None]:
    """The draft's new (text, HTML): its own part replaced as asked, the quote kept, the signature (found by its
    markers) replaced by the sender's, kept, or taken off; untouched when none of those was asked."""
    if args.body is None and args.body_html is None and args.from_address is None and args.signature is None:
        return text, html_part
    own_text, plain_quote, html_quote = split_quote(text, html_part)
    own_html = html_part[: len(html_part) - len(html_quote)] if html_part is not None else None
    bare_text, bare_html, had_signature = split_signature(own_text, own_html)
    # Left unsaid, a signature stays as it was; a new sender brings theirs, as Gmail's From menu does.
    wanted = args.signature if args.signature is not None else (had_signature or args.from_address is not None)
    signature = signature_of(wanted)
    new_text = args.body if args.body is not None else bare_text
    if args.body_html is not None:
        new_html: str | None = args.body_html
    elif args.body is not None:
        new_html = None  # the old HTML would contradict the new text
    else:
        new_html = bare_html
    new_text, new_html = signed(new_text, new_html, signature, plain_quote=plain_quote, html_quote=html_quote)
    if html_part is not None and new_html is None:
        notes.append("the HTML version was dropped because the text changed: pass body_html to keep one")
    return new_text, new_html


def render_draft(result: DraftResult) -> str:
    verb = "would be updated (dry run)" if result.dry_run else "updated (not sent)"
    lines = [f"Draft {result.draft_id} {verb}" + (f" | thread {result.thread_id}" if result.thread_id else "")]
    lines.append(from_line(result.from_address, result.mailbox))
    for name, values in (("To", result.to), ("Cc", result.cc), ("Bcc", result.bcc)):
        if values:
            lines.append(f"{name}: {', '.join(values)}")
    lines.append(f"Subject: {result.subject or '(no subject)'}")
    if result.attachments:
        lines.append("Attachments: " + ", ".join(result.attachments))
    lines.extend(f"Note: {note}" for note in result.notes)
    lines.append(how_to_send(result.send_with, result.draft_id))
    return "\n".join(lines)


# -- list --------------------------------------------------------------------------------------------------------


class ListDraftsInput(ToolInput):
    query: str = Field("", max_length=2000, description="Optional Gmail search among drafts.")
    max_results: Count = Field(20, ge=1, le=50)
    page_token: str | None = Field(None, max_length=500, description="next_page_token of the previous call.")


class DraftItem(DraftHeaders):
    draft_id: str
    message_id: str | None = None
    thread_id: str | None = None
    date: str | None = None
    snippet: str = ""


class ListDraftsResult(ToolOutput):
    drafts: list[DraftItem]
    result_count: int
    next_page_token: str | None = None
    send_as: list[str] = Field(
        default_factory=list, description="The addresses a draft may be from (gmail_create_draft's from_address)."
    )


def list_drafts(ctx: ToolContext, args: ListDraftsInput) -> ListDraftsResult:
    page = ctx.gmail.list_drafts(query=args.query, max_results=args.max_results, page_token=args.page_token)
    entries = [entry for entry in page.get("drafts") or [] if isinstance(entry, dict)]
    message_ids = [str((entry.get("message") or {}).get("id") or "") for entry in entries]
    details = ctx.gmail.get_messages_metadata(
        [mid for mid in message_ids if mid], headers=LIST_HEADERS, fields="id,threadId,snippet,payload/headers"
    )
    items = []
    for entry, message_id in zip(entries, message_ids, strict=True):
        resource = details.get(message_id)
        headers = (resource.get("payload") or {}).get("headers") if isinstance(resource, dict) else None
        headers = headers if isinstance(headers, list) else []

        def field(name: str, headers: list[Any] = headers) -> str:
            return bounded(header_value(headers, name) or "", MAX_ITEM_FIELD_CHARS) or ""

        items.append(
            DraftItem(
                draft_id=str(entry.get("id") or ""),
                message_id=message_id or None,
                thread_id=str((entry.get("message") or {}).get("threadId") or "") or None,
                to=split_address_list(field("To")),
                cc=split_address_list(field("Cc")),
                subject=field("Subject"),
                date=field("Date") or None,
                snippet=_snippet(resource),
            )
        )
    token = page.get("nextPageToken")
    return ListDraftsResult(
        drafts=items,
        result_count=len(items),
        next_page_token=str(token) if token else None,
        send_as=send_as_choices(ctx),  # settings.sendAs.list, kept a few minutes and shared with gmail_create_draft
    )


def _snippet(resource: object) -> str:
    if not isinstance(resource, dict):
        return ""
    # Gmail's snippets are HTML-escaped (`wasn&#39;t`, `&amp;`: Nango tests/untrash-thread.test.json)
    return clean_snippet(html.unescape(str(resource.get("snippet") or "")), MAX_ITEM_FIELD_CHARS) or ""


def render_drafts(result: ListDraftsResult) -> str:
    lines = [f"{result.result_count} drafts:" if result.drafts else "No drafts."]
    for item in result.drafts:
        to = ", ".join(item.to) or "(no recipients)"
        lines.append(f"- {item.draft_id} | To: {to} | {item.subject or '(no subject)'} | {item.snippet}")
    if result.next_page_token:
        lines.append(f"More: call again with page_token={result.next_page_token}")
    if result.send_as:
        lines.append("Drafts can be from (from_address): " + ", ".join(result.send_as))
    return "\n".join(lines)


# -- delete ------------------------------------------------------------------------------------------------------


class DeleteDraftInput(ToolInput):
    draft_id: str = DRAFT_ID_FIELD


class DeleteDraftResult(DraftHeaders):
    draft_id: str
    deleted: bool
    dry_run: bool = False


def delete_draft(ctx: ToolContext, args: DeleteDraftInput) -> DeleteDraftResult:
    _draft, raw = fetch_draft(ctx, args.draft_id)  # says what goes, and not_found for a wrong id
    summary = summarize_draft(raw)
    result = DeleteDraftResult(
        draft_id=args.draft_id,
        deleted=False,
        dry_run=ctx.safety.dry_run,
        to=list(summary.to),
        cc=list(summary.cc),
        bcc=list(summary.bcc),
        subject=summary.subject,
    )
    with audited(ctx, "gmail_delete_draft", "drafts.delete", ids=[args.draft_id]):
        if not ctx.safety.dry_run:
            ctx.gmail.delete_draft(args.draft_id)
            result.deleted = True
    return result


def render_deleted(result: DeleteDraftResult) -> str:
    what = f"draft {result.draft_id} ({result.subject or 'no subject'}, to {', '.join(result.to) or 'nobody'})"
    if result.dry_run:
        return f"Dry run: {what} would be deleted."
    return f"Deleted {what}. Sent and received mail was not touched."
