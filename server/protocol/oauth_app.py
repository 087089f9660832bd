"""`--http --auth oauth` assembled: the state store, the authorization server, each person's mailboxes, the gate.

    store (SQLite in GMAIL_MCP_STATE_DIR, or GMAIL_MCP_STORE's Redis)
        -> Ledger (codes, tokens) + Records (clients, consents, Google grants)
    AuthorizationServer (server/remote/authorization.py): /authorize, /token, /register, /revoke, the consent
        and Google callback pages, the discovery documents; mounted beside the SDK's /mcp
    PeopleSource (server/remote/mailboxes.py): the tools' ContextSource, bound per request to the person
    OAuthGate (oauth_guard.py): in HttpGuard, the bearer token checked against the Ledger for this resource
    the connect-another-account page (connect_page.py)

The dispatcher is the same as in every other mode: the person only changes which mailboxes its source holds.
"""

from __future__ import annotations

import os
import socket
import ssl
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from starlette.routing import Route

from server.protocol import http
from server.protocol.connect_page import CONNECT_PATH, ConnectPages, url_elicitation
from server.protocol.dispatch import build_server
from server.protocol.http_guard import HttpGuard
from server.protocol.oauth_guard import STORE_DOWN, STORE_RETRY_AFTER_S, OAuthGate
from server.remote.authorization import AllowedUsers, AuthorizationServer
from server.remote.client_metadata import ClientMetadataFetcher
from server.remote.google_upstream import GOOGLE_CERTS_URL, GOOGLE_TOKEN_URI, GoogleSignIn, GoogleWebClient
from server.remote.key_ring import request_state_security
from server.remote.ledger import Cipher, Ledger
from server.remote.mailboxes import PeopleSource
from server.remote.oauth_config import CALLBACK_PATH, OAuthSettings, write_tool_groups
from server.remote.records import Records
from server.remote.sqlite_store import STATE_DIR_ENV
from server.remote.store import StateStore, StoreUnavailable
from server.remote.store_choice import NAMESPACE_ENV, PUBLIC_URL_ENV, STORE_ENV, open_store
from server.runtime.config import Settings
from server.runtime.http_config import HttpSettings
from server.runtime.observability import get_logger
from server.tools import Toolset

log = get_logger("http")


@dataclass
class Remote:
    """The pieces of the remote mode, kept for tests and the entry point."""

    store: StateStore
    ledger: Ledger
    records: Records
    client: GoogleWebClient
    people: PeopleSource
    gate: OAuthGate
    guard: HttpGuard
    authorization: AuthorizationServer | None = None


def certs_url_for(client: GoogleWebClient) -> str:
    """Google's JWKS, or the emulator's when the client file points its token endpoint elsewhere (tests, demo)."""
    if client.token_uri == GOOGLE_TOKEN_URI:
        return GOOGLE_CERTS_URL
    parts = urlsplit(client.token_uri)
    return f"{parts.scheme}://{parts.netloc}/oauth2/v3/certs"


def with_public_origin(options: HttpSettings, oauth: OAuthSettings) -> HttpSettings:
    """The consent page posts from the public origin, and a proxy in front forwards the public Host."""
    from dataclasses import replace

    parts = urlsplit(oauth.public_url)
    origin = f"{parts.scheme}://{parts.netloc}".lower()
    return replace(
        options,
        allowed_origins=(*options.allowed_origins, origin),
        allowed_hosts=(*options.allowed_hosts, parts.netloc.lower(), (parts.hostname or "").lower()),
    )


def build_remote(
    settings: Settings,
    oauth: OAuthSettings,
    options: HttpSettings,
    *,
    cipher: Cipher,
    toolsets: tuple[Toolset, ...],
    metrics: Callable[[], tuple[bytes, str]],
    on_ready: Callable[[], None] = lambda: None,
    on_shutdown: Callable[[], None] = lambda: None,
    authorization_server: bool = True,
    extra_routes: Sequence[Any] = (),
    clock: Callable[[], float] = time.time,
    allow_loopback_clients: bool = False,
    metadata_tls: ssl.SSLContext | None = None,
    store: StateStore | None = None,
    vault_key: bytes | None = None,
) -> Remote:
    """Everything of the remote mode over one state store; `authorization_server=False` leaves the AS routes out
    (tests of the resource side issue tokens with the Ledger directly). `store`: the state store (default: the one
    `GMAIL_MCP_STORE` names, else SQLite in the state folder). `vault_key`: the key behind `cipher`, from which
    every replica derives the same request-state key ring (`remote/key_ring.py`; None: a key of this process)."""
    if store is None:  # the embedded store in the state folder, unless GMAIL_MCP_STORE names a shared one
        chosen = {name: os.environ[name] for name in (STORE_ENV, NAMESPACE_ENV) if name in os.environ}
        store = open_store({**chosen, STATE_DIR_ENV: str(oauth.state_dir), PUBLIC_URL_ENV: oauth.public_url}, clock)
    ledger, records = Ledger(store, cipher), Records(store, cipher)
    client = GoogleWebClient.from_file(oauth.google_client_file)
    client = GoogleWebClient(
        client.client_id, client.client_secret, client.auth_uri, client.token_uri, certs_url_for(client)
    )
    people = PeopleSource(records, client, settings, connect_url=oauth.issuer + CONNECT_PATH)
    sealing = request_state_security(vault_key) if vault_key else None
    server = build_server(people, toolsets=toolsets, enabled=settings.write_tools, request_state=sealing)
    server.middleware.append(people.middleware)
    server.middleware.append(url_elicitation(people))
    options = with_public_origin(options, oauth)
    guard = http.build_app(server, options, metrics=metrics, on_ready=on_ready, on_shutdown=on_shutdown)
    routes: list[Any] = list(extra_routes)
    authorization = None
    sign_in = GoogleSignIn(client, oauth.callback_url)
    if authorization_server:
        fetcher = ClientMetadataFetcher(store, allow_loopback_http=allow_loopback_clients, tls=metadata_tls)
        authorization = _authorization_server(store, cipher, oauth, sign_in, clock, fetcher)
        ledger, records = authorization.ledger, authorization.records
        routes += list(authorization.routes())
    callback = next((r for r in routes if isinstance(r, Route) and r.path == CALLBACK_PATH), None)
    routes[:0] = ConnectPages(people, records, sign_in, oauth).routes(callback)  # first: its callback wraps the AS's
    guard.app.router.routes.extend(routes)  # type: ignore[attr-defined]  # the SDK's Starlette app
    guard.app.add_exception_handler(StoreUnavailable, store_down)  # type: ignore[attr-defined]
    gate = OAuthGate(
        ledger,
        oauth.public_url,
        oauth.issuer,
        people,
        write_tool_groups(toolsets),
        max_body_bytes=options.max_body_bytes,
    )
    guard.oauth = gate
    guard.readiness = store.ready
    return Remote(store, ledger, records, client, people, gate, guard, authorization)


async def store_down(_request: Any, _error: Exception) -> Any:
    """The authorization server's pages and endpoints while the state store is unreachable: 503 with Retry-After
    (a client retries; nothing is answered as refused)."""
    from starlette.responses import JSONResponse

    return JSONResponse(STORE_DOWN, status_code=503, headers={"Retry-After": str(STORE_RETRY_AFTER_S)})


def open_oauth_server(
    settings: Settings,
    bind: str,
    *,
    metrics: Callable[[], tuple[bytes, str]],
    demo_folder: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[Remote, socket.socket, HttpSettings]:
    """The listening socket and the app of `--http BIND --auth oauth`; ValueError (a plain message naming the
    variable) for any misconfiguration, OSError when the address cannot be had. With `demo_folder` (--demo) the
    demo's emulator plays Google (`app/demo_remote.py`)."""
    from server.remote.oauth_config import load_oauth_settings, open_vault, vault_key_bytes
    from server.runtime.config import home_dir
    from server.runtime.http_config import load_http_settings
    from server.toolsets import ALL_TOOLSETS

    env = dict(os.environ) if env is None else env
    options = load_http_settings(bind, env)
    sock = http.bind_socket(options.host, options.port)
    try:
        url = options.url(sock.getsockname()[1])
        routes: list[Any] = []
        if demo_folder is not None:
            from server.app.demo_mode import demo_oauth_env

            demo_env, person = demo_oauth_env(settings, env.get("GMAIL_MCP_PUBLIC_URL") or url, demo_folder)
            env.update(demo_env)
            os.environ["GMAIL_MCP_TOKEN_KEY"] = env["GMAIL_MCP_TOKEN_KEY"]  # the vault reads it (demo only)
            routes.append(demo_chooser(settings.endpoint, person))
        oauth = load_oauth_settings(
            loopback_bind=options.loopback,
            toolsets=ALL_TOOLSETS,
            enabled=settings.write_tools,
            home=home_dir(),
            env=env,
        )
        cipher = open_vault()
        vault_key = vault_key_bytes()
        store = open_store({**env, STATE_DIR_ENV: str(oauth.state_dir)})
    except StoreUnavailable as exc:
        sock.close()
        raise ValueError(str(exc)) from None
    except ValueError:
        sock.close()
        raise

    def ready() -> None:
        log.info(f"serving MCP over streamable HTTP at {url}", extra={"url": url, "auth": "oauth"})
        sys.stderr.write(f"Add this URL to your MCP client (each person signs in with Google): {oauth.public_url}\n")
        sys.stderr.flush()

    held: list[Remote] = []

    def shutdown() -> None:
        if held:
            log.info("metrics summary", extra={"metrics": held[0].people.metrics_summary()})

    remote = build_remote(
        settings,
        oauth,
        options,
        cipher=cipher,
        toolsets=ALL_TOOLSETS,
        metrics=metrics,
        on_ready=ready,
        on_shutdown=shutdown,
        extra_routes=routes,
        store=store,
        vault_key=vault_key,
    )
    held.append(remote)
    return remote, sock, options


def demo_chooser(emulator: str, person: str) -> Any:
    """`--demo`: Google's account chooser, played by this server: the demo person is chosen, and the browser goes on
    to the emulator's authorization endpoint (which consents for the person `login_hint` names)."""
    from starlette.requests import Request
    from starlette.responses import RedirectResponse
    from starlette.routing import Route

    from server.app.demo_mode import DEMO_CHOOSER_PATH

    async def choose(request: Request) -> RedirectResponse:
        query = urlencode({**dict(request.query_params), "login_hint": person})
        return RedirectResponse(f"{emulator}/o/oauth2/v2/auth?{query}", status_code=302)

    return Route(DEMO_CHOOSER_PATH, choose, methods=["GET"])


def _authorization_server(
    store: StateStore,
    cipher: Cipher,
    oauth: OAuthSettings,
    sign_in: GoogleSignIn,
    clock: Callable[[], float],
    fetcher: ClientMetadataFetcher,
) -> AuthorizationServer:
    return AuthorizationServer(
        store,
        cipher,
        resource_url=oauth.public_url,
        issuer=oauth.issuer,
        google=sign_in,
        fetcher=fetcher,
        allowed_users=AllowedUsers.parse(oauth.allowed_users),
        mcp_scopes=list(oauth.mcp_scopes),
        google_scopes_for=oauth.google_scopes_for,
        clock=clock,
        registration=True,
    )
