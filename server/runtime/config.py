"""Settings from the environment and an optional `.env` file in the project root.

Desktop clients (Claude Desktop, Cursor) may start the server with any working directory, often `/`, so every
relative path resolves against the project root, never against the current directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
GMAIL_READONLY_SCOPE = "https://www.googleapis.com/auth/gmail.readonly"
GOOGLE_API_ENDPOINT = "https://gmail.googleapis.com"

DEFAULT_ENRICH_TOP_K = 10
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_QUOTA_UNITS_PER_S = 100.0  # well under Gmail's 250 units/s per user
DEFAULT_THREAD_MAX_CHARS = 60_000


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
    quota_units_per_s: float = DEFAULT_QUOTA_UNITS_PER_S  # client-side quota budget (gmail/quota.py); 0: off
    download_dir: Path | None = None  # GMAIL_MCP_DOWNLOAD_DIR: attachments may be saved here; None: never saved
    thread_max_chars: int = DEFAULT_THREAD_MAX_CHARS  # GMAIL_MCP_THREAD_MAX_CHARS: one thread answer's text

    @property
    def endpoint(self) -> str:
        """The Gmail API base URL requests go to (no trailing slash)."""
        return (self.api_endpoint or GOOGLE_API_ENDPOINT).rstrip("/")

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


def _resolve(path_text: str) -> Path:
    path = Path(path_text).expanduser()
    return path if path.is_absolute() else PROJECT_ROOT / path


def _number(env: dict[str, str], name: str, default: float, *, minimum: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {raw!r}")
    return value


def load_settings(env: dict[str, str] | None = None, *, dotenv: bool = True) -> Settings:
    """Reads settings from `env` (default: the process environment, after loading `.env` without overriding)."""
    if env is None:
        if dotenv:
            from dotenv import load_dotenv

            load_dotenv(PROJECT_ROOT / ".env", override=False)
        env = dict(os.environ)
    return Settings(
        credentials_path=_resolve(env.get("GMAIL_CREDENTIALS_PATH") or "credentials.json"),
        token_path=_resolve(env.get("GMAIL_TOKEN_PATH") or ".token.json"),
        api_endpoint=(env.get("GMAIL_API_ENDPOINT") or "").strip() or None,
        token_uri=(env.get("GMAIL_TOKEN_URI") or "").strip() or None,
        log_level=(env.get("GMAIL_MCP_LOG_LEVEL") or "INFO").strip().upper(),
        enrich_top_k=int(_number(env, "GMAIL_MCP_ENRICH_TOP_K", DEFAULT_ENRICH_TOP_K, minimum=0)),
        request_timeout_s=_number(env, "GMAIL_MCP_TIMEOUT_S", DEFAULT_TIMEOUT_S, minimum=0.1),
        backoff_scale=_number(env, "GMAIL_MCP_BACKOFF_SCALE", 1.0, minimum=0.0),
        quota_units_per_s=_number(env, "GMAIL_MCP_QUOTA_UNITS_PER_S", DEFAULT_QUOTA_UNITS_PER_S, minimum=0.0),
        thread_max_chars=int(_number(env, "GMAIL_MCP_THREAD_MAX_CHARS", DEFAULT_THREAD_MAX_CHARS, minimum=2_000)),
        download_dir=_resolve(env["GMAIL_MCP_DOWNLOAD_DIR"])
        if (env.get("GMAIL_MCP_DOWNLOAD_DIR") or "").strip()
        else None,
    )
