"""What the draft and send tools share: argument types, the person's own addresses, raw drafts, audit records."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

from pydantic import Field

from server.content.compose.addresses import AddressError, Recipient, parse_recipients
from server.errors import GmailError, InvalidInputError, NotFoundError
from server.tools import ToolContext
from server.toolsets.common import ToolOutput

DRAFT_ID_PATTERN = r"^[A-Za-z0-9_-]{1,128}$"
AddressText = Annotated[str, Field(min_length=1, max_length=2000)]
AddressList = Annotated[list[AddressText], Field(max_length=100)]
ADDRESS_FORM = '"Name <a@b.com>" or "a@b.com" each'

FileName = Annotated[str, Field(min_length=1, max_length=500)]
DRAFT_ID_FIELD = Field(
    pattern=DRAFT_ID_PATTERN, description="The draft id (from gmail_create_draft or gmail_list_drafts)."
)
NOT_SENT = "Nothing is sent: the draft waits in Gmail's Drafts."
SEND_TOOL = "gmail_send_draft"


def send_tool(ctx: ToolContext) -> str | None:
    """The tool that sends a draft, when this server offers it (the `send` toolset enabled), else None: a write
    tool's answer never points to a tool the assistant does not have."""
    return SEND_TOOL if "send" in ctx.safety.write_tools else None


def how_to_send(tool: str | None, draft_id: str | None) -> str:
    """What the answer about a saved draft says about sending it."""
    if tool is None:
        return f"{NOT_SENT} This server does not send mail: the person can send it from Gmail."
    return f"{NOT_SENT} To send it: {tool} with draft_id={draft_id} (it asks the person first)."


def draft_id_hint(ctx: ToolContext) -> str:
    """Where a draft id comes from, naming only the draft tools this server offers."""
    if "drafts" in ctx.safety.write_tools:
        return "Take the id from gmail_list_drafts (or the answer of gmail_create_draft)."
    return "Take the id from the draft as the person sees it in Gmail's Drafts, or ask the person for it."


class DraftHeaders(ToolOutput):
    to: list[str] = Field(default_factory=list)
    cc: list[str] = Field(default_factory=list)
    bcc: list[str] = Field(default_factory=list)
    subject: str = ""


def recipients(entries: Sequence[str] | None, field_name: str) -> list[Recipient]:
    try:
        return parse_recipients(entries or ())
    except AddressError as error:
        raise InvalidInputError(
            f"{field_name}: {error}", hint='Give addresses as "name@example.com" or "Name <name@example.com>".'
        ) from None


def raw_bytes(resource: dict[str, Any], what: str) -> bytes:
    """The RFC 5322 bytes of a `raw`-format message (or a draft's message)."""
    raw = resource.get("raw")
    if not isinstance(raw, str):
        raise InvalidInputError(f"Gmail returned {what} without its content.")
    try:
        return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
    except (binascii.Error, ValueError):
        raise InvalidInputError(f"Gmail returned {what} whose content cannot be decoded.") from None


def fetch_draft(ctx: ToolContext, draft_id: str) -> tuple[dict[str, Any], bytes]:
    """(the draft resource, its message's bytes); a missing draft is a not_found error that says so."""
    try:
        draft = ctx.gmail.get_draft(draft_id, fmt="raw")
    except NotFoundError:
        raise NotFoundError(
            f"No draft with id {draft_id!r}: it was sent, deleted, or the id is wrong.",
            hint=draft_id_hint(ctx),
            status=404,
        ) from None
    message = draft["message"] if isinstance(draft.get("message"), dict) else {}
    return draft, raw_bytes(message, "the draft")


def own_addresses(ctx: ToolContext) -> list[str]:
    """The account's own addresses: every send-as alias, else (no settings access) the profile's address. Both
    lists are kept per account (`AccountCache`), so a draft asks Gmail for them at most once."""
    entries = ctx.cache.send_as() or []
    found = [str(entry["sendAsEmail"]) for entry in entries if isinstance(entry, dict) and entry.get("sendAsEmail")]
    if not found:
        address = ctx.cache.own_address()
        found = [address] if address else []
    return found


@contextmanager
def audited(ctx: ToolContext, tool: str, action: str, **fields: Any) -> Iterator[dict[str, Any]]:
    """Writes the audit line of one write when it ends: the outcome (done, dry run, or the error category).

    The block may add fields (ids learnt from Gmail's answer) to the yielded dict.
    """
    extra: dict[str, Any] = {}
    try:
        yield extra
    except GmailError as error:
        ctx.safety.audit.record(
            tool, action, outcome=error.code, account=ctx.account, dry_run=ctx.safety.dry_run, **{**fields, **extra}
        )
        raise
    outcome = "dry_run" if ctx.safety.dry_run else "done"
    ctx.safety.audit.record(
        tool, action, outcome=outcome, account=ctx.account, dry_run=ctx.safety.dry_run, **{**fields, **extra}
    )


def from_line(from_address: str | None, mailbox: str | None, signature: bool = False) -> str:
    """The line of a draft or send answer that says who is sending, from which account: the person must see it."""
    who = from_address or "the account's default address (Gmail fills it in)"
    account = f" | account {mailbox}" if mailbox else ""
    return f"From: {who}{account}" + (" | signature added" if signature else "")
