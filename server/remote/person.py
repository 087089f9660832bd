"""Who a remote request is for: the person behind an access token this server issued.

In `--auth oauth` mode the HTTP guard verifies the bearer token (issued by this server, for this resource) and
puts the SDK's `AuthenticatedUser` in the request scope, its `AccessToken` carrying the person's Google `sub` as
`subject`, the MCP scopes granted to the client, and the signed-in address in `claims["email"]`. Everything
downstream (the person's accounts, caches, codes, limits, audit) is keyed by `Person.subject`, never by anything
a tool's arguments say.

MCP scopes are this server's own, one per tool group: `gmail.read` (always), and `gmail.<group>` for each write
group the operator enabled (`gmail.drafts`, `gmail.send`, `gmail.labels`, ...). The authorization server maps them
to the Google scopes it asks Google for; the resource server answers 403 `insufficient_scope` naming the one a
write tool needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

READ_SCOPE = "gmail.read"
SCOPE_PREFIX = "gmail."


def group_scope(group: str) -> str:
    """The MCP scope of a write group: `drafts` -> `gmail.drafts`."""
    return SCOPE_PREFIX + group


def scopes_for_groups(groups: Iterable[str]) -> list[str]:
    """Every MCP scope a server with these write groups enabled offers, read first."""
    return [READ_SCOPE, *(group_scope(group) for group in sorted(set(groups)))]


@dataclass(frozen=True)
class Person:
    subject: str  # the Google `sub` of the person who signed in: stable, unique per person
    email: str  # the address they signed in with (for display and the allow-list, never for lookups)
    client_id: str  # the MCP client the token was issued to
    scopes: frozenset[str]  # the MCP scopes granted to that client

    def may_use(self, group: str | None) -> bool:
        """Whether the token's grant covers a tool group (None: a read tool)."""
        return (READ_SCOPE if group is None else group_scope(group)) in self.scopes


def person_of(request_context: Any) -> Person | None:
    """The person of a request (the SDK's request context, or an ASGI scope); None outside `--auth oauth`."""
    request = getattr(request_context, "request", None)
    scope = getattr(request, "scope", None)
    if scope is None and isinstance(request_context, dict):
        scope = request_context
    user = scope.get("user") if isinstance(scope, dict) else None
    token = getattr(user, "access_token", None)
    subject = getattr(token, "subject", None)
    if token is None or not subject:
        return None
    claims = getattr(token, "claims", None) or {}
    return Person(
        subject=str(subject),
        email=str(claims.get("email") or ""),
        client_id=str(token.client_id),
        scopes=frozenset(token.scopes),
    )
