"""Which opt-in toolsets the person turned on, checked against what exists and what the token was granted.

Used at start-up (an unknown name stops the server with the list of valid ones; an enabled toolset whose scopes
the token lacks is a warning naming the consent command) and by `--check` (the same, as checklist lines).
"""

from __future__ import annotations

from collections.abc import Iterable

from server import scopes
from server.hints import auth_command
from server.tools import Toolset, unavailable_toolsets


def validate_enabled(enabled: frozenset[str], toolsets: Iterable[Toolset]) -> None:
    """Raises ValueError for a name that is not an opt-in toolset of this version."""
    known = sorted(toolset.name for toolset in toolsets if toolset.opt_in)
    unknown = sorted(enabled.difference(known))
    if unknown:
        valid = ", ".join(known) if known else "none: this version has no write tools"
        raise ValueError(
            f"unknown write tool group(s) {', '.join(unknown)} (GMAIL_MCP_WRITE_TOOLS / --enable); valid: {valid}"
        )


def missing_scope_messages(
    enabled: frozenset[str], toolsets: Iterable[Toolset], granted: frozenset[str] | None
) -> list[str]:
    """One line per enabled toolset the token cannot serve: what it needs and the command that grants it."""
    short_names = {scope: name for name, scope in scopes.BY_NAME.items()}
    messages = []
    for toolset, needs in unavailable_toolsets(toolsets, enabled=enabled, granted=granted):
        # The narrowest scope that serves the toolset is the one to ask for, beside read access.
        wanted = sorted({short_names[scope] for scope in needs if scope in short_names} - {"readonly"})
        command = auth_command("--scopes", ",".join(["readonly", *wanted[:1]]))
        messages.append(
            f"'{toolset.name}' tools are enabled but the token lacks their scope ({' or '.join(wanted) or 'none'}); "
            f"they stay hidden until you run `{command}`"
        )
    return messages
