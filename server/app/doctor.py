"""`python -m server.main --check`: diagnose a set-up step by step, say what is wrong and how to fix it.

Every configured account is checked in turn (token file, encryption, refresh, a real Gmail call, the scopes the
enabled write tools need, the Testing-mode 7-day limit), each with its own `auth_cli.py --account` command.
The checklist goes to stdout (this is not the MCP server: nothing else is written there) and the log lines stay
out of it unless `--verbose`; the exit status says whether Gmail works for every account.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from server.errors import GmailError, ReauthRequiredError
from server.runtime.config import Settings

Say = Callable[[str, str], None]


def _credentials_state(settings: Settings) -> tuple[str, str]:
    from server.runtime.client_file import inspect_client_file

    found = inspect_client_file(settings.credentials_path)
    if found.state == "missing":
        return "warn", (
            f"no OAuth client file at {settings.credentials_path} (needed only by auth_cli.py to create a token; "
            "see README 'Connect Gmail', or docs/accounts.md)"
        )
    # Only auth_cli.py reads the client file: a bad one is worth fixing, but a working token still serves.
    return ("warn" if found.state == "fail" else found.state), found.message + (
        " (only auth_cli.py needs it)" if found.state == "fail" else ""
    )


def run_checks(settings: Settings, *, out: TextIO | None = None) -> int:
    """Runs every check in order, stopping an account's checks at the first one later checks depend on.
    Returns the exit status (1 when any account fails)."""
    from server.app.token_folder import configured_accounts, default_account, folder_too_open

    stream = out or sys.stdout

    def say(state: str, text: str) -> None:
        stream.write(f"[{state:>4}] {text}\n")

    state, text = _credentials_state(settings)
    say(state, text)
    found = configured_accounts(settings)
    try:
        default_account(settings, [name for name, _ in found])
    except ValueError as exc:
        say("fail", str(exc))
        return 1
    if folder_too_open(settings.accounts_dir):
        say("warn", f"the token folder is open to other users: chmod 700 {settings.accounts_dir}")
    failed = not _report_encryption(settings, say)
    for name, path in found:
        if len(found) > 1:
            stream.write(f"account {name!r}:\n")
        failed |= not _check_account(settings.with_overrides(token_path=path), name, say)
    if failed:
        return 1
    say("ok", f"endpoint {settings.endpoint}: the server is ready for your MCP client")
    return 0


def _check_account(settings: Settings, name: str, say: Say) -> bool:
    from server.app.token_folder import consent_age_note, consent_command
    from server.auth import TokenStore, read_token_file, token_file_too_open
    from server.gmail_client import GmailClient
    from server.hints import auth_command, quote_command

    store = TokenStore(settings)
    command = consent_command(name)
    recorded: dict[str, object] = {}

    def token_file() -> str:
        info, sealed = read_token_file(settings.token_path)
        recorded.update(info)
        if token_file_too_open(settings.token_path):
            say("warn", f"{settings.token_path} is readable by other users: chmod 600 {settings.token_path}")
        if settings.token_encryption != "off" and not sealed:
            say(
                "warn",
                f"{settings.token_path} is not encrypted although GMAIL_MCP_TOKEN_ENCRYPTION is set: run "
                f"{quote_command(command)} (or it is sealed at its next refresh)",
            )
        return f"token file {settings.token_path}" + (f" (encrypted, key from {sealed})" if sealed else "")

    def refresh() -> str:
        credentials = store.get()
        expiry = credentials.expiry.isoformat() + "Z" if credentials.expiry else "unknown"
        return f"access token valid (expires {expiry})"

    def profile() -> str:
        data = GmailClient(settings, store).get_profile()
        address = data.get("emailAddress")
        if recorded.get("account") and str(recorded["account"]).lower() != str(address).lower():
            say(
                "warn",
                f"the token file says {recorded['account']} but Gmail answers for {address}: run "
                f"{quote_command(command)}",
            )
        return f"Gmail answers for {address} ({data.get('messagesTotal', '?')} messages)"

    for check in (token_file, refresh, profile):
        try:
            say("ok", check())
        except GmailError as error:
            say("fail", f"{error.message}\n       fix: {error.hint.replace(auth_command(), command)}")
            note = consent_age_note(recorded.get("authorized_at"), command)
            if note and not isinstance(error, ReauthRequiredError):  # an organisation's policy, not an expiry
                say("info", note)
            return False
    note = consent_age_note(recorded.get("authorized_at"), command)
    if note:
        say("warn", note)
    _report_toolsets(settings, say)
    return True


def _report_encryption(settings: Settings, say: Say) -> bool:
    from server.runtime.token_crypto import KeyUnavailable, resolve_scheme

    if settings.token_encryption == "off":
        return True
    try:
        source = resolve_scheme(settings.token_encryption)
    except KeyUnavailable as exc:
        say("fail", f"GMAIL_MCP_TOKEN_ENCRYPTION={settings.token_encryption}, but {exc}")
        return False
    say("ok", f"token files are encrypted at rest (key from {source})")
    return True


def _report_toolsets(settings: Settings, say: Say) -> None:
    from server import scopes
    from server.app.toolset_choice import missing_scope_messages
    from server.auth import read_token_info
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
