"""`python -m server.main --http 127.0.0.1:0` as a subprocess: its URL (read from its stderr), its log, and an
official MCP client over streamable HTTP with a chosen credential. Used by the HTTP tests and bench/http_bench.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from server.runtime.config import PROJECT_ROOT

START_TIMEOUT_S = 60.0


@dataclass
class HttpServer:
    url: str
    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)  # stderr so far (JSON log lines)

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")

    def events(self) -> list[dict[str, Any]]:
        parsed = []
        for line in list(self.lines):
            try:
                parsed.append(json.loads(line))
            except ValueError:
                continue
        return parsed

    def log_text(self) -> str:
        return "\n".join(self.lines)


def server_command(bind: str = "127.0.0.1:0", args: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, "-m", "server.main", "--http", bind, *args]


@contextmanager
def http_server(env: dict[str, str], bind: str = "127.0.0.1:0", args: tuple[str, ...] = ()) -> Iterator[HttpServer]:
    """Starts the server (`args` added to its command line, e.g. `--auth oauth`) and waits for the line that names
    its URL; stops it (SIGTERM) on exit."""
    process = subprocess.Popen(
        server_command(bind, args),
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **env},
        cwd="/",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    found = threading.Event()
    url: list[str] = []

    def pump() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line.rstrip("\n"))
            if not found.is_set() and "serving MCP over streamable HTTP" in line:
                url.append(json.loads(line)["url"])
                found.set()
        found.set()

    threading.Thread(target=pump, daemon=True).start()
    try:
        if not found.wait(START_TIMEOUT_S) or not url:
            process.kill()
            raise RuntimeError("the HTTP server did not start:\n" + "\n".join(lines[-20:]))
        yield HttpServer(url[0], process, lines)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# What the HTTP tests add to `support.emulator.emulator_env(...)`: no quota pacing (tests pace nothing), and the
# INFO log lines the tests read (the URL line, auth failures).
TEST_SERVER_ENV = {"GMAIL_MCP_QUOTA_UNITS_PER_S": "0", "GMAIL_MCP_LOG_LEVEL": "INFO"}


def mcp_client(url: str, mode: str, headers: dict[str, str] | None = None, hooks: list[Any] | None = None) -> Any:
    """The official MCP client over streamable HTTP (`mode` "legacy" or "auto"), sending `headers`."""
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(
        headers=headers or {}, timeout=httpx2.Timeout(60.0), event_hooks={"response": list(hooks or [])}
    )
    return Client(streamable_http_client(url, http_client=http), mode=mode)


def wait_for_exit(process: subprocess.Popen[str], timeout_s: float) -> int | None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return process.returncode
        time.sleep(0.05)
    return None
