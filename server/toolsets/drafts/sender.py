"""Which of the account's send-as identities a draft is from, and the signature that comes with it.

The identities come from `settings.sendAs.list`, asked once and kept per account (`AccountCache.send_as`). A
token without access to settings (`gmail.compose` alone) cannot list them: the draft is then from the primary
address (`users.getProfile`, also kept), with no signature, and an alias asked for is refused with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.content.compose.identity import (
    SendAs,
    default_identity,
    describe,
    find_identity,
    reply_identity,
    usable_identities,
)
from server.content.compose.signature import Signature
from server.errors import GmailError, InvalidInputError
from server.tools import ToolContext

FROM_HINT_SETTINGS = (
    "A new address is added in Gmail's settings (Accounts > Send mail as); once verified it can be used here."
)


@dataclass(frozen=True)
class Sender:
    identity: SendAs | None  # None: the account's address could not be learnt; Gmail writes its primary one
    account: str | None  # the account's primary address
    choices: tuple[str, ...] = ()  # every address the draft may be from
    why: str = ""  # why this one, when it is not the one asked for nor the default

    @property
    def from_address(self) -> str | None:
        return str(self.identity.sender) if self.identity is not None else None

    def signature(self, wanted: bool) -> Signature | None:
        if not wanted or self.identity is None:
            return None
        return Signature.from_html(self.identity.signature_html)


def identities(ctx: ToolContext) -> tuple[tuple[SendAs, ...], bool]:
    """(the identities a draft may be from, whether they came from settings.sendAs); without access to settings,
    the profile's address alone."""
    entries = ctx.cache.send_as()
    found = usable_identities(entries or [])
    if found:
        return found, True
    address = ctx.cache.own_address()
    return ((SendAs(address, is_primary=True, is_default=True),) if address else ()), False


def send_as_choices(ctx: ToolContext) -> list[str]:
    """The addresses a draft may be from, the default first ("a@x.com (default)"), for a read tool to list before
    any draft is made; empty when Gmail could not say (the draft tools then report it themselves)."""
    try:
        known, _listed = identities(ctx)
    except GmailError:
        return []
    ordered = sorted(known, key=lambda identity: not identity.is_default)
    return [identity.email + (" (default)" if identity.is_default else "") for identity in ordered]


def choose_sender(ctx: ToolContext, from_address: str | None, original_raw: bytes | None = None) -> Sender:
    """The identity asked for (refused, listing the valid ones, when it is not one of them), else the one the
    original was sent to (a reply), else the default."""
    known, listed = identities(ctx)
    primary = next((identity.email for identity in known if identity.is_primary), None)
    if from_address:
        chosen = find_identity(known, from_address)
        if chosen is None:
            if listed:
                hint = f"Give one of those as from_address, or leave it out for the default. {FROM_HINT_SETTINGS}"
            else:
                hint = (
                    f"This token cannot read the account's send-as settings, so only {describe(known) or 'the '}"
                    "primary address is known: leave from_address out, or ask the person to grant read access "
                    "(gmail-mcp-auth)."
                )
            raise InvalidInputError(
                f"{from_address[:200]!r} is not one of this account's send-as addresses "
                f"({describe(known) or 'none known'}).",
                hint=hint,
            )
        return Sender(chosen, primary, _emails(known))
    chosen = reply_identity(original_raw, known) if original_raw is not None else None
    default = default_identity(known)
    if chosen is not None and chosen != default:
        why = f"from {chosen.email}, the address the original was sent to (from_address chooses another)"
        return Sender(chosen, primary, _emails(known), why)
    return Sender(default, primary, _emails(known))


def draft_sender(ctx: ToolContext, from_address: str | None, current: str | None) -> Sender:
    """The identity of a draft being edited: the one asked for (checked as in `choose_sender`), else the one its
    From names (`current`), else the default."""
    if from_address:
        return choose_sender(ctx, from_address)
    known, _listed = identities(ctx)
    primary = next((identity.email for identity in known if identity.is_primary), None)
    found = find_identity(known, current) if current else None
    return Sender(found or default_identity(known), primary, _emails(known))


def _emails(known: tuple[SendAs, ...]) -> tuple[str, ...]:
    return tuple(identity.email for identity in known)
