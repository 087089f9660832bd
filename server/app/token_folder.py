"""Where each account's token lives, which accounts are configured, and what `auth_cli.py --list` shows.

The `default` account is the token file of a single-account set-up (`GMAIL_TOKEN_PATH`, `.token.json`), so
existing set-ups keep working unchanged. Every other account is `<name>.json` in the token folder
(`GMAIL_MCP_TOKEN_DIR`, by default `tokens/` beside `.token.json`): 0600 files in a 0700 folder, written by
`auth_cli.py --account NAME`. The accounts a server serves are the ones with a token file when it starts (the
`default` one also when no account has a token yet, so its tools answer with the hint to authorize).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from server.runtime.config import DEFAULT_ACCOUNT, Settings

ACCOUNT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
TESTING_MODE_DAYS = 7  # Google revokes refresh tokens of apps in "Testing" status 7 days after consent
WARN_AFTER_DAYS = 5


def check_name(name: str) -> str:
    """A valid account name (lower-cased), or ValueError saying what names look like."""
    value = (name or "").strip().lower()
    if not ACCOUNT_NAME.match(value):
        raise ValueError(
            f"invalid account name {name!r}: use 1-32 lower-case letters, digits, '-' or '_' (e.g. work, personal)"
        )
    return value


def consent_command(name: str) -> str:
    """The `auth_cli.py` command that (re-)authorizes an account."""
    from server.hints import auth_command

    return auth_command() if name == DEFAULT_ACCOUNT else auth_command("--account", name)


def token_path(settings: Settings, name: str) -> Path:
    name = check_name(name)
    return settings.token_path if name == DEFAULT_ACCOUNT else settings.accounts_dir / f"{name}.json"


def configured_accounts(settings: Settings) -> list[tuple[str, Path]]:
    """(name, token file) of every account with a token: `default` first, then the folder's in name order."""
    found: list[tuple[str, Path]] = []
    folder = settings.accounts_dir
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            name = path.stem.lower()
            if ACCOUNT_NAME.match(name) and name != DEFAULT_ACCOUNT and path.is_file():
                found.append((name, path))
    if settings.token_path.exists() or not found:
        found.insert(0, (DEFAULT_ACCOUNT, settings.token_path))
    return found


def default_account(settings: Settings, names: list[str]) -> str:
    """The account a call without `account` uses: GMAIL_MCP_DEFAULT_ACCOUNT, else `default`, else the first."""
    wanted = settings.default_account
    if wanted:
        if wanted not in names:
            raise ValueError(
                f"GMAIL_MCP_DEFAULT_ACCOUNT={wanted!r} has no token; configured accounts: {', '.join(names)}"
            )
        return wanted
    return DEFAULT_ACCOUNT if DEFAULT_ACCOUNT in names else names[0]


def private_folder(folder: Path) -> Path:
    """Creates the token folder owner-only (0700) and tightens an existing one."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.name == "posix":
        os.chmod(folder, 0o700)
    return folder


def folder_too_open(folder: Path) -> bool:
    if os.name != "posix":
        return False
    try:
        return bool(folder.stat().st_mode & 0o077)
    except OSError:
        return False


def remove_account(settings: Settings, name: str) -> Path:
    """Deletes an account's token file; FileNotFoundError when it has none."""
    path = token_path(settings, name)
    path.unlink()
    return path


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def token_age_days(authorized_at: object, now: float | None = None) -> float | None:
    """Days since consent, from the `authorized_at` auth_cli.py records; None when unknown or unreadable."""
    if not isinstance(authorized_at, str):
        return None
    try:
        moment = datetime.strptime(authorized_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return ((time.time() if now is None else now) - moment.timestamp()) / 86400


def consent_age_note(authorized_at: object, command: str, *, now: float | None = None) -> str | None:
    """The early warning for apps in Google's Testing mode, once the token is old enough to be near its end."""
    from server.hints import quote_command

    age = token_age_days(authorized_at, now)
    if age is None or age < WARN_AFTER_DAYS:
        return None
    when = "more than 7 days ago" if age >= TESTING_MODE_DAYS else f"{age:.0f} days ago"
    return (
        f"This token was granted {when}: if your Google Cloud app is in 'Testing' status, Google ends its tokens "
        f"7 days after consent. Run {quote_command(command)} to renew it, or publish the app (OAuth consent screen > "
        "Publish) so tokens stop expiring."
    )


@dataclass(frozen=True)
class AccountEntry:
    """One line of `auth_cli.py --list`."""

    name: str
    path: Path
    email: str | None
    authorized_at: str | None
    encrypted: str | None  # key source, None for a plain file
    problem: str | None  # why the file cannot be read, if it cannot


def describe_accounts(settings: Settings) -> list[AccountEntry]:
    from server.auth import read_token_file
    from server.errors import AuthError

    entries = []
    for name, path in configured_accounts(settings):
        if not path.exists():
            entries.append(AccountEntry(name, path, None, None, None, "no token yet"))
            continue
        try:
            info, sealed = read_token_file(path)
        except AuthError as error:
            entries.append(AccountEntry(name, path, None, None, None, error.message))
            continue
        email = str(info["account"]) if info.get("account") else None
        authorized = str(info["authorized_at"]) if info.get("authorized_at") else None
        entries.append(AccountEntry(name, path, email, authorized, sealed, None))
    return entries
