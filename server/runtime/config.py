"""Settings from the environment and an optional `.env` file in the server's home folder.

Desktop clients (Claude Desktop, Cursor) may start the server with any working directory, often `/`, so every
relative path resolves against the home folder, never against the current directory. The home folder is
`GMAIL_MCP_HOME` when set; else the checkout the code runs from (a clone set up with `setup_env`); else, for an
installed package (`pipx`, `uvx`, `pip install`), the user's configuration folder (`~/.config/gmail-mcp`,
`~/Library/Application Support/gmail-mcp`, `%APPDATA%\\gmail-mcp`).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from dataclasses import dataclass, replace
from datetime import timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from server import scopes
from server.runtime.token_crypto import parse_scheme

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds the `server` package
GMAIL_READONLY_SCOPE = scopes.READONLY  # the default consent
GOOGLE_API_ENDPOINT = "https://gmail.googleapis.com"
DEFAULT_ACCOUNT = "default"  # the account of the single-account token file (GMAIL_TOKEN_PATH, `.token.json`)

DEFAULT_ENRICH_TOP_K = 10
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_QUOTA_UNITS_PER_S = 100.0  # well under Gmail's 250 units/s per user
DEFAULT_SEARCH_CACHE_ENTRIES = 10  # the spec's LRU of recent searches
DEFAULT_SEARCH_CACHE_TTL_S = 300.0
DEFAULT_SUMMARY_CACHE_ENTRIES = 5_000
DEFAULT_SUMMARY_CACHE_MB = 8.0
DEFAULT_THREAD_MAX_CHARS = 60_000
DEFAULT_SEND_LIMIT_PER_HOUR = 10
DEFAULT_CONFIRMATION_TTL_S = 300.0
DEFAULT_CLEANUP_CALL_BUDGET_S = 120.0  # one gmail_cleanup_run call: well under claude.ai's 300 s


@dataclass(frozen=True)
class Settings:
    """Everything the server reads from its environment, resolved once at start-up."""

    credentials_path: Path
    token_path: Path
    api_endpoint: str | None  # None: Google's own endpoint
    token_uri: str | None  # None: the URI Google's token file implies
    log_level: str
    enrich_top_k: int
    request_timeout_s: float
    backoff_scale: float  # multiplies every retry wait; 1.0 in production, tiny in fault suites
    display_zone: tzinfo | None = None  # dates in tool text (GMAIL_MCP_TIMEZONE); None: the computer's zone
    write_tools: frozenset[str] = frozenset()  # opt-in toolsets the person enabled (GMAIL_MCP_WRITE_TOOLS, --enable)
    quota_units_per_s: float = DEFAULT_QUOTA_UNITS_PER_S  # client-side quota budget (gmail/quota.py); 0: off
    token_dir: Path | None = None  # further accounts' token files (GMAIL_MCP_TOKEN_DIR); None: see `accounts_dir`
    default_account: str | None = None  # the account a call without `account` uses (GMAIL_MCP_DEFAULT_ACCOUNT)
    token_encryption: str = "off"  # off | auto | keyring | env (GMAIL_MCP_TOKEN_ENCRYPTION; runtime/token_crypto.py)
    # gmail/cache.py: search pages validated by history (0 entries: off), message summaries (0 entries: off)
    search_cache_entries: int = DEFAULT_SEARCH_CACHE_ENTRIES
    search_cache_ttl_s: float = DEFAULT_SEARCH_CACHE_TTL_S
    summary_cache_entries: int = DEFAULT_SUMMARY_CACHE_ENTRIES
    summary_cache_mb: float = DEFAULT_SUMMARY_CACHE_MB
    warm_up: bool = True  # prepare the Google stack, token and connection right after `initialize`
    download_dir: Path | None = None  # GMAIL_MCP_DOWNLOAD_DIR: attachments may be saved here; None: never saved
    thread_max_chars: int = DEFAULT_THREAD_MAX_CHARS  # GMAIL_MCP_THREAD_MAX_CHARS: one thread answer's text
    # Writing (only with write tools enabled): see runtime/write_safety.py
    dry_run: bool = False  # GMAIL_MCP_DRY_RUN: write tools say what they would do and change nothing
    audit_log_path: Path | None = None  # GMAIL_MCP_AUDIT_LOG: audit lines also appended to this file
    attach_dir: Path | None = None  # GMAIL_MCP_ATTACH_DIR: the only folder drafts may attach local files from
    send_limit_per_hour: int = DEFAULT_SEND_LIMIT_PER_HOUR  # GMAIL_MCP_SEND_LIMIT_PER_HOUR
    confirmation_ttl_s: float = DEFAULT_CONFIRMATION_TTL_S  # how long a send confirmation code stays valid
    # Cleanup and unsubscribe (toolsets/cleanup, toolsets/unsubscribe)
    cleanup_call_budget_s: float = DEFAULT_CLEANUP_CALL_BUDGET_S  # GMAIL_MCP_CLEANUP_CALL_BUDGET_S: one run call
    cleanup_chunks_per_call: int = 0  # GMAIL_MCP_CLEANUP_CHUNKS_PER_CALL: tests end a call after N chunks; 0: off
    unsubscribe_allow_private: bool = False  # GMAIL_MCP_UNSUBSCRIBE_ALLOW_PRIVATE: tests only (loopback, http)

    @property
    def accounts_dir(self) -> Path:
        """The token folder of the named accounts: GMAIL_MCP_TOKEN_DIR, else `tokens/` beside the default
        account's token file (so a set-up that moves `.token.json` moves its accounts with it)."""
        return self.token_dir or self.token_path.parent / "tokens"

    @property
    def endpoint(self) -> str:
        """The Gmail API base URL requests go to (no trailing slash)."""
        return (self.api_endpoint or GOOGLE_API_ENDPOINT).rstrip("/")

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **changes)


def is_checkout(folder: Path = PROJECT_ROOT) -> bool:
    """True when the code runs from a source tree (a clone), not from an installed package in site-packages."""
    return (folder / "pyproject.toml").is_file() and (folder / "server" / "main.py").is_file()


def user_config_dir(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if sys.platform == "win32":
        return Path(env.get("APPDATA") or Path.home() / "AppData" / "Roaming") / "gmail-mcp"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "gmail-mcp"
    return Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "gmail-mcp"


def home_dir(env: dict[str, str] | None = None) -> Path:
    """Where credentials.json, .token.json and .env live unless configured otherwise (see the module docstring)."""
    env = dict(os.environ) if env is None else env
    configured = (env.get("GMAIL_MCP_HOME") or "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    return PROJECT_ROOT if is_checkout() else user_config_dir(env)


def ensure_home(env: dict[str, str] | None = None) -> Path:
    """Creates the home folder (owner only) when it is not the checkout: the folder the set-up steps tell a person
    to put credentials.json in exists from the first run of any command. Failures are left to the file access."""
    home = home_dir(env)
    if home != PROJECT_ROOT and not home.exists():
        with contextlib.suppress(OSError):
            home.mkdir(mode=0o700, parents=True)
    return home


def _resolve(path_text: str, home: Path) -> Path:
    path = Path(path_text).expanduser()
    return path if path.is_absolute() else home / path


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def zone_named(name: str | None) -> tzinfo | None:
    """An IANA zone (`Europe/Paris`), UTC, or None for `local`/empty (the computer's zone)."""
    if not name or name.strip().lower() == "local":
        return None
    if name.strip().upper() in ("UTC", "Z"):
        return timezone.utc
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            "GMAIL_MCP_TIMEZONE must be an IANA time zone such as Europe/Paris or America/New_York, UTC, or local; "
            f"got {name!r}"
        ) from None


def _log_level(env: dict[str, str]) -> str:
    raw = (env.get("GMAIL_MCP_LOG_LEVEL") or "INFO").strip()
    if raw.upper() not in LOG_LEVELS:
        raise ValueError(f"GMAIL_MCP_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {raw!r}")
    return raw.upper()


def parse_names(text: str) -> frozenset[str]:
    """`"drafts, labels"` or `"drafts labels"` -> {"drafts", "labels"}."""
    return frozenset(name.strip().lower() for name in text.replace(",", " ").split() if name.strip())


def _number(env: dict[str, str], name: str, default: float, *, minimum: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {raw!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {raw!r}")
    return value


def _optional_path(env: dict[str, str], name: str, home: Path) -> Path | None:
    raw = (env.get(name) or "").strip()
    return _resolve(raw, home).resolve() if raw else None


def load_settings(env: dict[str, str] | None = None, *, dotenv: bool = True) -> Settings:
    """Reads settings from `env` (default: the process environment, after loading `.env` without overriding)."""
    if env is None:
        if dotenv:
            from dotenv import load_dotenv

            load_dotenv(home_dir() / ".env", override=False)
        env = dict(os.environ)
    home = home_dir(env)
    return Settings(
        credentials_path=_resolve(env.get("GMAIL_CREDENTIALS_PATH") or "credentials.json", home),
        token_path=_resolve(env.get("GMAIL_TOKEN_PATH") or ".token.json", home),
        api_endpoint=(env.get("GMAIL_API_ENDPOINT") or "").strip() or None,
        token_uri=(env.get("GMAIL_TOKEN_URI") or "").strip() or None,
        log_level=_log_level(env),
        enrich_top_k=int(_number(env, "GMAIL_MCP_ENRICH_TOP_K", DEFAULT_ENRICH_TOP_K, minimum=0)),
        request_timeout_s=_number(env, "GMAIL_MCP_TIMEOUT_S", DEFAULT_TIMEOUT_S, minimum=0.1),
        backoff_scale=_number(env, "GMAIL_MCP_BACKOFF_SCALE", 1.0, minimum=0.0),
        write_tools=parse_names(env.get("GMAIL_MCP_WRITE_TOOLS", "")),
        display_zone=zone_named(env.get("GMAIL_MCP_TIMEZONE")),
        quota_units_per_s=_number(env, "GMAIL_MCP_QUOTA_UNITS_PER_S", DEFAULT_QUOTA_UNITS_PER_S, minimum=0.0),
        token_dir=_resolve(env["GMAIL_MCP_TOKEN_DIR"], home)
        if (env.get("GMAIL_MCP_TOKEN_DIR") or "").strip()
        else None,
        default_account=(env.get("GMAIL_MCP_DEFAULT_ACCOUNT") or "").strip().lower() or None,
        token_encryption=parse_scheme(env.get("GMAIL_MCP_TOKEN_ENCRYPTION")),
        search_cache_entries=int(_number(env, "GMAIL_MCP_SEARCH_CACHE_SIZE", DEFAULT_SEARCH_CACHE_ENTRIES, minimum=0)),
        search_cache_ttl_s=_number(env, "GMAIL_MCP_SEARCH_CACHE_TTL_S", DEFAULT_SEARCH_CACHE_TTL_S, minimum=0.0),
        summary_cache_entries=int(
            _number(env, "GMAIL_MCP_SUMMARY_CACHE_ENTRIES", DEFAULT_SUMMARY_CACHE_ENTRIES, minimum=0)
        ),
        summary_cache_mb=_number(env, "GMAIL_MCP_SUMMARY_CACHE_MB", DEFAULT_SUMMARY_CACHE_MB, minimum=0.0),
        warm_up=_flag(env, "GMAIL_MCP_WARM_UP", True),
        thread_max_chars=int(_number(env, "GMAIL_MCP_THREAD_MAX_CHARS", DEFAULT_THREAD_MAX_CHARS, minimum=2_000)),
        download_dir=_resolve(env["GMAIL_MCP_DOWNLOAD_DIR"], home)
        if (env.get("GMAIL_MCP_DOWNLOAD_DIR") or "").strip()
        else None,
        dry_run=_flag(env, "GMAIL_MCP_DRY_RUN", False),
        audit_log_path=_optional_path(env, "GMAIL_MCP_AUDIT_LOG", home),
        attach_dir=_optional_path(env, "GMAIL_MCP_ATTACH_DIR", home),
        send_limit_per_hour=int(_number(env, "GMAIL_MCP_SEND_LIMIT_PER_HOUR", DEFAULT_SEND_LIMIT_PER_HOUR, minimum=1)),
        confirmation_ttl_s=_number(env, "GMAIL_MCP_CONFIRMATION_TTL_S", DEFAULT_CONFIRMATION_TTL_S, minimum=10.0),
        cleanup_call_budget_s=_number(
            env, "GMAIL_MCP_CLEANUP_CALL_BUDGET_S", DEFAULT_CLEANUP_CALL_BUDGET_S, minimum=1.0
        ),
        cleanup_chunks_per_call=int(_number(env, "GMAIL_MCP_CLEANUP_CHUNKS_PER_CALL", 0, minimum=0)),
        unsubscribe_allow_private=_flag(env, "GMAIL_MCP_UNSUBSCRIBE_ALLOW_PRIVATE", False),
    )


def _flag(env: dict[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name} must be 1 or 0 (true/false), got {raw!r}")
