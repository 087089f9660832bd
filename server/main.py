"""Entry point: `python -m server.main` serves the Gmail tools over stdio (MCP), or over streamable HTTP.

    python -m server.main                  serve the user's Gmail (token from `server/auth_cli.py`, run once)
    python -m server.main --http 8080      serve it over streamable HTTP at http://127.0.0.1:8080/mcp
    python -m server.main --demo           serve the bundled demo mailbox through a local Gmail emulator
    python -m server.main --check          diagnose the set-up (credentials, tokens, refresh, Gmail): a checklist
                                           on stdout
    python -m server.main --enable G       turn on a group of write tools (also GMAIL_MCP_WRITE_TOOLS)

Every account with a token (`auth_cli.py --account NAME`) is served; tools take an optional `account`.
stdout carries only the MCP protocol; logs are JSON lines on stderr.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any, NoReturn

from server import __version__
from server.runtime.config import Settings, ensure_home, load_settings, parse_names
from server.runtime.observability import Metrics, get_logger, setup_logging

log = get_logger("main")


def report_token_state(settings: Settings, account: str | None = None) -> None:
    """Start-up diagnosis without network: a missing token is logged, and the server keeps serving."""
    from server.auth import read_token_info, token_file_too_open
    from server.errors import AuthError

    named = {"account": account} if account else {}
    try:
        read_token_info(settings.token_path)
    except AuthError as error:
        log.error(
            "no usable Gmail token: tools will answer auth_error until one exists",
            extra={"detail": error.message, "hint": error.hint, **named},
        )
        return
    if token_file_too_open(settings.token_path):
        log.warning("token file is readable by other users; run: chmod 600 " + str(settings.token_path), extra=named)


def open_accounts(settings: Settings, metrics_for: Callable[[str], Metrics] = lambda name: Metrics()) -> Any:
    """The account registry, with each account's token state and missing write scopes reported on stderr."""
    from server.app.accounts import AccountRegistry
    from server.app.toolset_choice import missing_scope_messages
    from server.toolsets import ALL_TOOLSETS

    accounts = AccountRegistry.from_settings(settings, metrics_for=metrics_for)
    several = len(accounts.names) > 1
    for account in accounts.accounts():
        report_token_state(account.settings, account.name if several else None)
        for message in missing_scope_messages(settings.write_tools, ALL_TOOLSETS, account.granted_scopes()):
            log.warning(message, extra={"account": account.name} if several else {})
    return accounts


def serve(settings: Settings, start_up: AbstractContextManager[Any] | None = None) -> int:
    """stdio; the server is built inside `start_up` (`frozen_when_built` for the `gmail-mcp` command)."""
    with start_up or nullcontext():
        import anyio

        from server.protocol.dispatch import build_server
        from server.protocol.stdio_guard import stdio_channel
        from server.toolsets import ALL_TOOLSETS
        from server.toolsets.common import DisplayZone

        DisplayZone.configure(settings.display_zone)
        try:
            accounts = open_accounts(settings)
        except ValueError as exc:  # GMAIL_MCP_DEFAULT_ACCOUNT names an account without a token
            return start_failed(f"invalid setting: {exc}")
        server = build_server(accounts, toolsets=ALL_TOOLSETS, enabled=settings.write_tools)

        async def run() -> None:
            async with anyio.create_task_group() as tasks:
                if os.name == "posix":
                    tasks.start_soon(_cancel_on_sigterm, tasks.cancel_scope, lambda: _force_exit(accounts))
                async with stdio_channel() as (messages, write_stream):
                    await server.run(messages, write_stream, server.create_initialization_options())
                tasks.cancel_scope.cancel()  # the client closed stdin: stop watching for signals too

        log.info(
            "gmail MCP server ready",
            extra={"version": __version__, "endpoint": settings.endpoint, "accounts": accounts.names},
        )
    try:
        anyio.run(run)
    except KeyboardInterrupt:
        log.info("interrupted")
    finally:
        log.info("metrics summary", extra={"metrics": accounts.metrics_summary()})
    return 0


def serve_http(
    settings: Settings, bind: str, start_up: AbstractContextManager[Any] | None = None, *, auth: str = "bearer"
) -> int:
    """`--http [HOST:]PORT`: the same tools over streamable HTTP (`server/protocol/http.py`)."""
    if auth == "oauth":
        return serve_oauth(settings, bind, start_up)
    with start_up or nullcontext():
        from server.auth import token_file_too_open
        from server.protocol import http
        from server.protocol.dispatch import build_server
        from server.protocol.http_guard import accounts_of
        from server.runtime.http_config import check_accounts, load_http_settings
        from server.runtime.prometheus import Exporter
        from server.toolsets import ALL_TOOLSETS
        from server.toolsets.common import DisplayZone

        DisplayZone.configure(settings.display_zone)
        exporter = Exporter()
        try:
            options = load_http_settings(bind)
            accounts = open_accounts(settings, exporter.metrics_for)
            check_accounts(options, accounts.names)
        except ValueError as exc:
            return start_failed(f"cannot serve over HTTP: {exc}")
        try:
            sock = http.bind_socket(options.host, options.port)
        except OSError as exc:
            return start_failed(
                f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}"
                + ("; another program uses this port: pick another with --http PORT" if is_in_use(exc) else "")
            )
        url = options.url(sock.getsockname()[1])
        server = build_server(accounts, toolsets=ALL_TOOLSETS, enabled=settings.write_tools, accounts_of=accounts_of)

        def ready() -> None:
            extra = {"url": url, "version": __version__, "accounts": accounts.names, "auth": bool(options.credentials)}
            log.info(f"serving MCP over streamable HTTP at {url}", extra=extra)
            if not options.credentials:
                log.warning("no HTTP token configured: any local process can use this server (GMAIL_MCP_HTTP_TOKEN)")
            token_file = os.environ.get("GMAIL_MCP_HTTP_TOKEN_FILE", "").strip()
            if token_file and token_file_too_open(Path(token_file).expanduser()):
                log.warning(f"the HTTP token file is readable by other users; run: chmod 600 {token_file}")

        guard = http.build_app(
            server,
            options,
            metrics=exporter.render,
            on_ready=ready,
            on_shutdown=lambda: log.info("metrics summary", extra={"metrics": accounts.metrics_summary()}),
        )
        guard.on_auth_failure = lambda reason: exporter.auth_failures.labels(reason).inc()
        exporter.in_flight.set_function(lambda: guard.in_flight)
    try:
        http.run(guard, sock, options)
    except KeyboardInterrupt:
        log.info("interrupted")
    return 0


def serve_oauth(settings: Settings, bind: str, start_up: AbstractContextManager[Any] | None = None) -> int:
    """`--http [HOST:]PORT --auth oauth`: each person signs in with Google (`server/protocol/oauth_app.py`)."""
    with start_up or nullcontext():
        from server.protocol import http
        from server.protocol.oauth_app import open_oauth_server
        from server.runtime.prometheus import Exporter
        from server.toolsets.common import DisplayZone

        DisplayZone.configure(settings.display_zone)
        exporter = Exporter()
        demo_folder = SCRATCH_FOLDERS[-1] if settings.api_endpoint and SCRATCH_FOLDERS else None
        try:
            remote, sock, options = open_oauth_server(settings, bind, metrics=exporter.render, demo_folder=demo_folder)
        except ValueError as exc:
            return start_failed(f"cannot serve with --auth oauth: {exc}")
        except OSError as exc:
            return start_failed(f"cannot listen on {bind}: {exc.strerror or exc}")
    try:
        http.run(remote.guard, sock, options)
    except KeyboardInterrupt:
        log.info("interrupted")
    finally:
        remote.store.close()
    return 0


SHUTDOWN_GRACE_S = 1.0


async def _cancel_on_sigterm(scope: Any, force_exit: Callable[[], None]) -> None:
    """SIGTERM (how desktop clients stop a server) cancels the server's task group: a clean unwind, so the
    metrics summary is written. A signal handler that raised instead could fire inside any task and escape as
    an exception group, ending the process with a traceback. The unwind can wait on a worker thread that cannot
    be interrupted (stdin still open, a Gmail call in flight), so a timer ends the process after a short grace."""
    import anyio

    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _signum in signals:
            log.info("SIGTERM received: shutting down")
            timer = threading.Timer(SHUTDOWN_GRACE_S, force_exit)
            timer.daemon = True
            timer.start()
            scope.cancel()
            return


def _force_exit(accounts: Any) -> None:
    log.info("metrics summary", extra={"metrics": accounts.metrics_summary()})
    exit_now(0)


def _stop_on_sigterm() -> None:
    """Until the event loop watches for SIGTERM itself (start-up; always on Windows), SIGTERM exits at once with
    status 0, like the normal shutdown, instead of the default death by signal. It exits rather than raising:
    an exception thrown into whatever runs at that moment (an import, a C extension) can surface as a crash."""

    def handler(_signum: int, _frame: Any) -> None:
        exit_now(0)

    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, handler)


def start_failed(message: str) -> int:
    """A start-up failure, for the person who reads the terminal or the client's log: one plain line on stderr
    (not a JSON log line), naming the setting, flag or port. Exit status 2."""
    from server.hints import program_name

    sys.stderr.write(f"{program_name('gmail-mcp', 'server.main')}: {message}\n")
    sys.stderr.flush()
    return 2


def is_in_use(exc: OSError) -> bool:
    import errno

    return exc.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", -1), 10048)


def main(argv: list[str] | None = None, *, freeze_start_up: bool = False) -> int:
    from server.hints import program_name

    parser = argparse.ArgumentParser(
        prog=program_name("gmail-mcp", "server.main"), description="Gmail MCP server (stdio or HTTP)."
    )
    parser.add_argument("--demo", action="store_true", help="serve the bundled demo mailbox (no Google account)")
    parser.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve over streamable HTTP at /mcp instead of stdio (host defaults to 127.0.0.1; see docs/http.md)",
    )
    parser.add_argument(
        "--new-http-token",
        action="store_true",
        help="print a new random token for GMAIL_MCP_HTTP_TOKEN and exit",
    )
    parser.add_argument(
        "--auth",
        choices=("bearer", "oauth"),
        default="bearer",
        help="with --http: bearer (static tokens, the default) or oauth (each person signs in with Google; "
        "needs GMAIL_MCP_PUBLIC_URL and GMAIL_MCP_GOOGLE_CLIENT_FILE)",
    )
    parser.add_argument("--check", action="store_true", help="diagnose the set-up (a checklist on stdout) and exit")
    parser.add_argument("--verbose", action="store_true", help="with --check: also show the log lines (stderr)")
    parser.add_argument(
        "--enable",
        action="append",
        default=[],
        metavar="GROUP",
        help="turn on a group of write tools (as GMAIL_MCP_WRITE_TOOLS does); the token must hold its scope too",
    )
    parser.add_argument("--version", action="version", version=f"gmail-mcp {__version__}")
    args = parser.parse_args(argv)
    if args.new_http_token:
        import secrets

        sys.stdout.write(secrets.token_urlsafe(32) + "\n")
        return 0

    ensure_home()
    try:
        settings = load_settings()
        settings = settings.with_overrides(write_tools=settings.write_tools | parse_names(",".join(args.enable)))
        if settings.write_tools:
            from server.app.toolset_choice import validate_enabled
            from server.toolsets import ALL_TOOLSETS

            validate_enabled(settings.write_tools, ALL_TOOLSETS)
    except ValueError as exc:
        if args.check:  # the checklist's reader looks at stdout
            sys.stdout.write(f"[fail] invalid setting: {exc}\n")
        return start_failed(f"invalid setting: {exc}")
    # --check prints a checklist for a person: its log lines would only interleave with it, unless asked for.
    setup_logging(settings.log_level if args.verbose or not args.check else "QUIET")
    _stop_on_sigterm()
    with ExitStack() as stack:
        if args.demo:
            from server.app.demo_mode import demo_settings

            # A forced exit (SIGTERM) skips the context's clean-up: exit_now removes the demo's folder itself.
            settings = stack.enter_context(demo_settings(settings, SCRATCH_FOLDERS))
        if args.check:
            from server.app.doctor import run_checks

            return run_checks(settings)
        start_up = frozen_when_built() if freeze_start_up else None
        if args.auth == "oauth" and not args.http:
            return start_failed("--auth oauth serves over HTTP: add --http [HOST:]PORT")
        if args.http:
            return serve_http(settings, args.http, start_up, auth=args.auth)
        return serve(settings, start_up)


SCRATCH_FOLDERS: list[Path] = []  # temporary folders of this process (the demo's token), removed on any exit


def exit_now(code: int) -> NoReturn:
    """Ends the process without joining anyio's worker threads, which are not daemons: after SIGTERM one stays
    blocked reading stdin (forever, if the client keeps it open), after EOF one may sit in a hung Gmail request.
    Everything worth keeping (answers, the metrics summary) is written by the time `main` returns."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    for folder in SCRATCH_FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)
    os._exit(code)


@contextmanager
def frozen_when_built() -> Iterator[None]:
    """The server is built inside this block with the cyclic garbage collector off; however the block ends, the
    objects built so far are set aside for good (`gc.freeze`) and collection is back on.

    Start-up builds ~120,000 objects that live as long as the process (the SDK's protocol types, the tool models
    and their schemas); with the collector on, ~200 collections traverse them again and again while they are
    built (~0.06 s, a tenth of the start-up), and every later collection, during tool calls too, would again.
    The few cycles start-up leaves behind (~1,800 objects, ~1.4 MB) are set aside with them rather than paid for
    with a full collection now. Only the `gmail-mcp` command uses it (`console_main`): tests calling `main()`
    in-process keep collecting everything."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def console_main() -> None:
    """The `gmail-mcp` command: the same flags as `python -m server.main`."""
    exit_now(main(freeze_start_up=True))


if __name__ == "__main__":
    console_main()
