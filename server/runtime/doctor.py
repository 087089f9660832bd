"""`python -m server.main --check`: diagnose a set-up step by step, say what is wrong and how to fix it.

The checklist goes to stdout (this is not the MCP server: nothing else is written there) and the log lines stay
out of it unless `--verbose`; the exit status says whether Gmail works.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from server.errors import GmailError
from server.runtime.config import Settings


def _credentials_state(settings: Settings) -> tuple[str, str]:
    from server.runtime.client_file import inspect_client_file

    found = inspect_client_file(settings.credentials_path)
    if found.state == "missing":
        return "warn", (
            f"no OAuth client file at {settings.credentials_path} (needed only by auth_cli.py to create a token; "
            "see README 'Google Cloud set-up')"
        )
    # Only auth_cli.py reads the client file: a bad one is worth fixing, but a working token still serves.
    return ("warn" if found.state == "fail" else found.state), found.message + (
        " (only auth_cli.py needs it)" if found.state == "fail" else ""
    )


def run_checks(settings: Settings, *, out: TextIO | None = None) -> int:
    """Runs every check in order, stopping at the first one later checks depend on. Returns the exit status."""
    from server.auth import TokenStore, read_token_info, token_file_too_open
    from server.gmail_client import GmailClient

    stream = out or sys.stdout

    def say(state: str, text: str) -> None:
        stream.write(f"[{state:>4}] {text}\n")

    state, text = _credentials_state(settings)
    say(state, text)

    store = TokenStore(settings)

    def token_file() -> str:
        read_token_info(settings.token_path)
        if token_file_too_open(settings.token_path):
            say("warn", f"{settings.token_path} is readable by other users: chmod 600 {settings.token_path}")
        return f"token file {settings.token_path}"

    def refresh() -> str:
        credentials = store.get()
        expiry = credentials.expiry.isoformat() + "Z" if credentials.expiry else "unknown"
        return f"access token valid (expires {expiry})"

    def profile() -> str:
        data = GmailClient(settings, store).get_profile()
        return f"Gmail answers for {data.get('emailAddress')} ({data.get('messagesTotal', '?')} messages)"

    checks: list[Callable[[], str]] = [token_file, refresh, profile]
    for check in checks:
        try:
            say("ok", check())
        except GmailError as error:
            say("fail", f"{error.message}\n       fix: {error.hint}")
            return 1
    _report_toolsets(settings, say)
    say("ok", f"endpoint {settings.endpoint}: the server is ready for your MCP client")
    return 0


def _report_toolsets(settings: Settings, say: Callable[[str, str], None]) -> None:
    from server.auth import read_token_info
    from server.gmail import scopes
    from server.runtime.toolset_choice import missing_scope_messages
    from server.toolsets import ALL_TOOLSETS

    if not settings.write_tools:
        say("ok", "read-only: no write tools enabled (GMAIL_MCP_WRITE_TOOLS / --enable)")
        return
    granted = scopes.parse_granted(read_token_info(settings.token_path).get("scopes"))
    problems = missing_scope_messages(settings.write_tools, ALL_TOOLSETS, granted)
    for problem in problems:
        say("warn", problem)
    if not problems:
        say("ok", f"write tools enabled and granted: {', '.join(sorted(settings.write_tools))}")
    say("ok", _write_safety_line(settings))


def _write_safety_line(settings: Settings) -> str:
    """How the write tools will behave: dry run, send limit, audit file, attachment folder."""
    parts = ["DRY RUN (nothing is changed or sent)" if settings.dry_run else "writes are real"]
    parts.append(f"at most {settings.send_limit_per_hour} sends an hour, each confirmed by you")
    parts.append(f"audit log: stderr{' + ' + str(settings.audit_log_path) if settings.audit_log_path else ''}")
    if settings.attach_dir is None:
        parts.append("attaching local files: off (GMAIL_MCP_ATTACH_DIR)")
    else:
        state = "" if settings.attach_dir.is_dir() else " (missing!)"
        parts.append(f"attachments only from {settings.attach_dir}{state}")
    return "; ".join(parts)
