"""Settings of `--http --auth oauth`, from the environment, and the scope maps between MCP and Google.

    GMAIL_MCP_PUBLIC_URL          the URL clients add (https; loopback http for trying it out): the resource
                                  identifier (RFC 8707) every token is issued for. A bare origin means `<origin>/mcp`.
    GMAIL_MCP_GOOGLE_CLIENT_FILE  the operator's Google OAuth client, type "Web application", whose authorized
                                  redirect URIs hold `<public origin>/oauth/google/callback`
    GMAIL_MCP_ALLOWED_USERS       who may sign in: addresses and `@domain` entries, comma-separated (required
                                  unless the server is reachable from this machine only)
    GMAIL_MCP_STATE_DIR           where the state store lives (SQLite; default: `state` in the home folder)
    GMAIL_MCP_TOKEN_KEY           the Fernet key that seals Google refresh tokens (else the OS keyring)

Every problem is a ValueError whose message names the variable and what to do: the server exits with it before
it listens.

MCP scopes are this server's own (`person.py`): `gmail.read` and one per enabled write group. Each maps to the
narrowest Google scope that serves every tool of its group, as the toolsets declare them (read -> gmail.readonly,
drafts -> gmail.compose, send -> gmail.compose: Gmail's drafts.send needs it, labels -> gmail.modify);
`GoogleSignIn` asks for `openid email` beside them (the person is their Google `sub`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from server import scopes
from server.remote.ledger import Cipher
from server.remote.person import READ_SCOPE, SCOPE_PREFIX, scopes_for_groups
from server.runtime.http_config import is_loopback
from server.tools import Toolset

CALLBACK_PATH = "/oauth/google/callback"
# Narrowest first: the first of these that serves every tool of a group is the one Google is asked for.
NARROWEST_FIRST = (scopes.READONLY, scopes.SEND, scopes.COMPOSE, scopes.LABELS, scopes.MODIFY, scopes.FULL)


@dataclass(frozen=True)
class OAuthSettings:
    public_url: str  # the resource: https://mail.example.net/mcp
    issuer: str  # the authorization server: the public URL's origin (its endpoints hang below it)
    google_client_file: Path
    allowed_users: str  # the raw list; the authorization server parses it (AllowedUsers.parse)
    state_dir: Path
    mcp_scopes: tuple[str, ...]
    google_scopes: dict[str, tuple[str, ...]]  # MCP scope -> the Google scope(s) it needs

    @property
    def callback_url(self) -> str:
        return self.issuer + CALLBACK_PATH

    def google_scopes_for(self, mcp_scopes: Iterable[str]) -> list[str]:
        """The Gmail scopes the MCP scopes need, in a stable order (`GoogleSignIn` always adds `openid email`; the
        authorization server checks Google granted each of these, and Google reports `email` under another name)."""
        wanted: list[str] = []
        for scope in mcp_scopes:
            wanted += self.google_scopes.get(scope, ())
        return list(dict.fromkeys(wanted))


def group_google_scope(toolset: Toolset) -> str:
    """The narrowest Google scope that serves every tool of `toolset`."""
    serving = frozenset.intersection(*(spec.scopes for spec in toolset.tools)) if toolset.tools else frozenset()
    return next((scope for scope in NARROWEST_FIRST if scope in serving), scopes.MODIFY)


def scope_maps(
    toolsets: Iterable[Toolset], enabled: frozenset[str]
) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """(the MCP scopes offered, MCP scope -> Google scopes) for a server with the write groups `enabled`."""
    offered = [toolset for toolset in toolsets if toolset.opt_in and toolset.name in enabled]
    mapping: dict[str, tuple[str, ...]] = {READ_SCOPE: (scopes.READONLY,)}
    for toolset in offered:
        mapping[SCOPE_PREFIX + toolset.name] = (group_google_scope(toolset),)
    return tuple(scopes_for_groups(toolset.name for toolset in offered)), mapping


def write_tool_groups(toolsets: Iterable[Toolset]) -> dict[str, str]:
    """Tool name -> its write group (for the 403 `insufficient_scope` check); read tools are absent."""
    return {spec.name: toolset.name for toolset in toolsets if toolset.opt_in for spec in toolset.tools}


def public_resource(text: str) -> str:
    """The resource URL clients use: https (http only on loopback), no query or fragment; `/mcp` when bare."""
    value = text.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.query or parts.fragment:
        raise ValueError(
            f"GMAIL_MCP_PUBLIC_URL must be the https URL clients add, e.g. https://mail.example.net/mcp; got {value!r}"
        )
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ValueError(
            f"GMAIL_MCP_PUBLIC_URL {value!r} is plain http on a reachable host: serve it behind TLS (Caddy, nginx) "
            "and give the https URL (http is accepted for loopback only)"
        )
    path = parts.path.rstrip("/") or "/mcp"
    return f"{parts.scheme}://{parts.netloc}{path}"


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def check_client_file(path: Path, callback: str) -> None:
    """ValueError unless `path` is a Web client whose redirect URIs hold `callback`."""
    from server.remote.google_upstream import GoogleWebClient

    try:
        GoogleWebClient.from_file(path)
    except ValueError as error:
        raise ValueError(f"GMAIL_MCP_GOOGLE_CLIENT_FILE: {error}") from None
    web = json.loads(path.read_text("utf-8"))["web"]
    if callback not in (web.get("redirect_uris") or []):
        raise ValueError(
            f"GMAIL_MCP_GOOGLE_CLIENT_FILE {path}: the client's authorized redirect URIs lack {callback}; add it in "
            "the Google Cloud console (APIs & Services > Credentials > the Web client), download the file again"
        )


def load_oauth_settings(
    *,
    loopback_bind: bool,
    toolsets: Iterable[Toolset],
    enabled: frozenset[str],
    home: Path,
    env: dict[str, str] | None = None,
) -> OAuthSettings:
    """The oauth settings; ValueError naming the variable for anything missing or unusable."""
    env = dict(os.environ) if env is None else env
    raw_url = env.get("GMAIL_MCP_PUBLIC_URL", "").strip()
    if not raw_url:
        raise ValueError(
            "--auth oauth needs GMAIL_MCP_PUBLIC_URL, the https URL clients add (e.g. https://mail.example.net/mcp)"
        )
    resource = public_resource(raw_url)
    issuer = origin_of(resource)
    client_text = env.get("GMAIL_MCP_GOOGLE_CLIENT_FILE", "").strip()
    if not client_text:
        raise ValueError(
            "--auth oauth needs GMAIL_MCP_GOOGLE_CLIENT_FILE, the JSON of your Google OAuth client of type 'Web "
            f"application' with the redirect URI {issuer}{CALLBACK_PATH}"
        )
    client_file = Path(client_text).expanduser()
    if not client_file.is_file():
        raise ValueError(f"GMAIL_MCP_GOOGLE_CLIENT_FILE {client_file}: no such file")
    check_client_file(client_file, issuer + CALLBACK_PATH)
    allowed = env.get("GMAIL_MCP_ALLOWED_USERS", "").strip()
    local_only = loopback_bind and is_loopback(urlsplit(resource).hostname or "")
    if not allowed and not local_only:
        raise ValueError(
            "GMAIL_MCP_ALLOWED_USERS is required when the server is reachable from other machines: list the "
            "addresses and @domain entries allowed to sign in (e.g. ada@example.com,@example.org)"
        )
    state_text = env.get("GMAIL_MCP_STATE_DIR", "").strip()
    state_dir = Path(state_text).expanduser() if state_text else home / "state"  # as sqlite_store.state_dir
    try:
        state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(f"GMAIL_MCP_STATE_DIR {state_dir}: cannot create it ({error.strerror})") from None
    if not os.access(state_dir, os.W_OK):
        raise ValueError(f"GMAIL_MCP_STATE_DIR {state_dir}: not writable by this user")
    mcp_scopes, google = scope_maps(toolsets, enabled)
    return OAuthSettings(resource, issuer, client_file, allowed, state_dir, mcp_scopes, google)


def open_vault() -> Cipher:
    """The Fernet cipher of Google refresh tokens; ValueError naming GMAIL_MCP_TOKEN_KEY when there is none."""
    from server.remote.records import vault_cipher
    from server.runtime.token_crypto import KeyUnavailable

    try:
        return vault_cipher()
    except KeyUnavailable as error:
        raise ValueError(
            f"--auth oauth seals Google refresh tokens with GMAIL_MCP_TOKEN_KEY (or the OS keyring): {error}"
        ) from None


def vault_key_bytes() -> bytes:
    """The vault key itself (after `open_vault` found it): the request-state key ring is derived from it."""
    from server.runtime.token_crypto import key_for

    return key_for("auto")[1]
