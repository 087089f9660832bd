"""Streamable HTTP mode: the SDK's own streamable HTTP app behind `HttpGuard`, served by uvicorn.

One endpoint, `/mcp`, serves both protocol eras: 2026-07-28 requests are stateless (each carries its protocol
version), handshake-era clients get a session (`Mcp-Session-Id`) unless the server runs stateless (for several
workers without sticky routing). `/healthz` is for orchestrators, `/metrics` for Prometheus.

Shutdown (SIGTERM, Ctrl-C): the guard stops taking new work and ends idle event streams at once, uvicorn
closes the listening socket and waits up to the grace period for calls in flight to finish, then the lifespan
ends (the metrics summary is logged there, before the process exits).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

from server.protocol.http_guard import HttpGuard
from server.runtime.http_config import HttpSettings
from server.runtime.observability import get_logger

log = get_logger("http")
BACKLOG = 512


def build_app(
    server: Any,
    settings: HttpSettings,
    *,
    metrics: Callable[[], tuple[bytes, str]],
    on_ready: Callable[[], None] = lambda: None,
    on_shutdown: Callable[[], None] = lambda: None,
) -> HttpGuard:
    """The ASGI app: the guard in front of the SDK's streamable HTTP app for the low-level `server`."""
    from mcp.server.transport_security import TransportSecuritySettings

    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=settings.stateless,
        # Event streams by default: they let a handshake-era call ask the client something (elicitation).
        json_response=settings.json_responses,
        max_request_body_size=settings.max_body_bytes,
        # Host and Origin are checked by HttpGuard for every bind address (the SDK checks loopback binds only).
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    session_lifespan = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with session_lifespan(application) as state:
            on_ready()
            try:
                yield state
            finally:
                release_streams()
                on_shutdown()

    app.router.lifespan_context = lifespan
    return HttpGuard(app, settings, metrics)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one); OSError when the address cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and without it
    # Nagle's algorithm holds every response body back for the client's delayed ACK (~40 ms per request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if os.name == "posix":  # on Windows SO_REUSEADDR would let another process take the port over
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def run(guard: HttpGuard, sock: socket.socket, settings: HttpSettings) -> None:
    """Serves until SIGTERM / SIGINT, then shuts down gracefully (see the module docstring)."""
    import uvicorn

    class GracefulServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if not self.should_exit:
                log.info("shutdown requested: finishing calls in flight", extra={"signal": sig})
                loop.call_soon_threadsafe(guard.stop)
            super().handle_exit(sig, frame)

    _drain_streams_ourselves()
    config = uvicorn.Config(
        guard,
        lifespan="on",
        log_config=None,  # uvicorn's loggers propagate to our JSON handler on stderr
        access_log=False,
        server_header=False,
        proxy_headers=True,
        forwarded_allow_ips=settings.forwarded_allow_ips,
        timeout_graceful_shutdown=int(max(1, round(settings.shutdown_grace_s))),
        timeout_keep_alive=30,
        backlog=BACKLOG,
    )
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(GracefulServer(config).serve(sockets=[sock]))
    finally:
        loop.close()


def _drain_streams_ourselves() -> None:
    """sse-starlette (the SDK's event streams) ends every open stream the moment uvicorn sees SIGTERM, which
    would cut off the answers of calls in flight. The guard ends idle GET streams itself instead, and answers
    to POSTs finish on their own; the library's flag is raised once the lifespan ends (`release_streams`)."""
    try:
        from sse_starlette.sse import AppStatus

        AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]  # sse-starlette: unannotated
    except (ImportError, AttributeError):  # another version: its own drain stays on (calls may be cut short)
        log.warning("event streams will be closed at once on shutdown (unknown sse-starlette version)")


def release_streams() -> None:
    try:
        from sse_starlette.sse import AppStatus

        AppStatus.should_exit = True
    except ImportError:
        pass
