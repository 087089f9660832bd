"""Shared pieces of the reliability suites (`test_reliability_*.py`).

- `server_env` / `mcp_over_stdio`: `python -m server.main` as a subprocess, driven by the official MCP client.
- `RawServer`: the same subprocess driven line by line (garbage on stdin, EOF, SIGTERM, peak memory).
- `StdoutWatch`: counts stdout lines the MCP client could not parse as JSON-RPC (stdout is the protocol only).
- `SecretWatch`: the secrets a run handled (emulator OAuth values, every access token it issued) and a scan of
  logs and results for any of them.
- `tally`: figures for `bench/reliability_report.py`, appended as JSON lines to the file named by
  `GMAIL_MCP_RELIABILITY_TALLY` (a no-op when unset, i.e. in ordinary test runs).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from server.emulator import CLIENT_SECRET, REFRESH_TOKEN, Emulator
from server.runtime.config import PROJECT_ROOT
from server.tests.support.emulator import emulator_env

TALLY_ENV = "GMAIL_MCP_RELIABILITY_TALLY"
CATEGORIES = frozenset(
    {
        "auth_error",
        "permission_denied",
        "not_found",
        "rate_limited",
        "quota_exceeded",
        "transient",
        "invalid_input",
        "unknown_outcome",
        "confirmation_invalid",
        "send_limit_reached",
        "internal_error",
    }
)


def tally(kind: str, count: int = 1, **detail: Any) -> None:
    """Records a figure for the reliability report (fault case passed, fuzz cases run, ...)."""
    path = os.environ.get(TALLY_ENV)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"kind": kind, "count": count, **detail}) + "\n")


def server_env(emulator: Emulator | None, token_path: Path, **settings: str) -> dict[str, str]:
    """Environment for a server subprocess: the caller's, minus any GMAIL_* it had, pointed at `emulator`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GMAIL_")}
    env.update(
        PYTHONPATH=str(PROJECT_ROOT),
        GMAIL_TOKEN_PATH=str(token_path),
        GMAIL_MCP_BACKOFF_SCALE="0.001",  # 1/2/4 s become 1/2/4 ms
        GMAIL_MCP_LOG_LEVEL="DEBUG",  # the most log output, for the leak scans
        GMAIL_CREDENTIALS_PATH=str(token_path.parent / "no-credentials.json"),
        # Fault cases count the requests each call makes: a cache answering a repeat would hide the fault.
        GMAIL_MCP_SEARCH_CACHE_SIZE="0",
        GMAIL_MCP_SUMMARY_CACHE_ENTRIES="0",
    )
    if emulator is not None:
        env.update(emulator_env(emulator, token_path))
    env.update(settings)
    return env


def mcp_over_stdio(env: dict[str, str], errlog: IO[str], mode: str = "legacy") -> Client:
    """The official MCP client over a `python -m server.main` subprocess (cwd `/`, as desktop clients do)."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "server.main"], env=env, cwd="/")
    return Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=60)


def result_text(result: Any) -> str:
    """Everything a tool result shows the model: its text blocks and its structured content."""
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + "\n" + json.dumps(result.structured_content, ensure_ascii=False)


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, f"expected an error result, got: {result_text(result)[:500]}"
    error = result.meta["gmail-mcp/error"]
    assert error["category"] in CATEGORIES and error["message"] and error["hint"]
    return error


class StdoutWatch(logging.Handler):
    """Counts server stdout lines the MCP client failed to parse (it logs each one on `mcp.client.stdio`)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.bad_lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.bad_lines.append(record.getMessage())

    @contextlib.contextmanager
    def watching(self) -> Iterator[StdoutWatch]:
        logger = logging.getLogger("mcp.client.stdio")
        logger.addHandler(self)
        try:
            yield self
        finally:
            logger.removeHandler(self)


class SecretWatch:
    """The secrets of a run: the emulator's client secret and refresh token, and every access token it issues."""

    def __init__(self, emulator: Emulator) -> None:
        self.secrets: set[str] = {REFRESH_TOKEN, CLIENT_SECRET}
        self._tokens = emulator.app.tokens
        self._grant = self._tokens.grant

        def recording_grant(form: Any) -> tuple[int, dict[str, object]]:
            status, body = self._grant(form)
            if isinstance(body.get("access_token"), str):
                self.secrets.add(str(body["access_token"]))
            return status, body

        self._tokens.grant = recording_grant  # type: ignore[method-assign]

    def add(self, *values: str) -> None:
        self.secrets.update(values)

    def leaks(self, texts: dict[str, str]) -> list[str]:
        """`"<secret prefix>… in <where>"` for every secret found in any of the named texts."""
        found = [
            f"{secret[:12]}… in {where}" for where, text in texts.items() for secret in self.secrets if secret in text
        ]
        tally("leak_scan", len(texts), leaks=len(found))
        return found

    def close(self) -> None:
        self._tokens.grant = self._grant  # type: ignore[method-assign]


class RawServer:
    """`python -m server.main` driven by raw JSON-RPC lines; every stdout line is kept and checked."""

    def __init__(self, env: dict[str, str], stderr_path: Path) -> None:
        self._stderr = open(stderr_path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.stderr_path = stderr_path
        self.process = subprocess.Popen(
            [sys.executable, "-m", "server.main"],
            env=env,
            cwd="/",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self.lines: list[bytes] = []
        self.others: list[dict[str, Any]] = []  # messages read while waiting for another id
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 1000

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            try:
                self._inbox.put(json.loads(line))
            except ValueError:
                self._inbox.put({"unparseable": line[:200].decode("utf-8", "replace")})
        self._inbox.put(None)

    def send(self, raw: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw)
        self.process.stdin.flush()

    def send_json(self, message: dict[str, Any]) -> None:
        self.send(json.dumps(message).encode() + b"\n")

    def next_message(self, timeout: float = 60) -> dict[str, Any] | None:
        return self._inbox.get(timeout=timeout)

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
        """Sends a request and returns its answer (messages without that id are kept for `drain`)."""
        self._next_id += 1
        request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_json(message)
        return self.wait_for(request_id, timeout)

    def wait_for(self, request_id: Any, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self._inbox.get(timeout=max(0.01, deadline - time.monotonic()))
            assert message is not None, "the server closed stdout"
            if message.get("id") == request_id:
                return message
            self.others.append(message)

    def initialize(self, version: str = "2025-06-18") -> dict[str, Any]:
        answer = self.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "reliability", "version": "1"}},
        )
        self.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        answer = self.request("tools/call", {"name": name, "arguments": arguments}, timeout)
        assert "result" in answer, answer
        return answer["result"]

    def peak_rss_mb(self) -> float | None:
        """The server's peak resident memory (Linux /proc only; None elsewhere)."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return None

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()

    def wait_exit(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def stdout_is_only_json_rpc(self) -> bool:
        for line in self.lines:
            try:
                message = json.loads(line)
            except ValueError:
                return False
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                return False
        return True

    def stderr_text(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        """Ends the process if a test left it running (a failed assertion), then releases the files."""
        if self.process.poll() is None:
            self.close_stdin()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._stderr.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# -- one server subprocess serving a whole module of fault cases ---------------------------------------------------

SEARCH = "gmail_search_messages"
GET = "gmail_get_message"


class FaultStack:
    """An emulator that can go down and come back on its port, and one MCP session to a server using it."""

    def __init__(self, root: Path, timeout_s: float) -> None:
        from server.emulator import start_emulator
        from server.tests.support.emulator import build_mailbox

        self.root = root
        self.mailbox = build_mailbox(root / "mail")
        self.emulator = start_emulator(self.mailbox)
        self.secrets = SecretWatch(self.emulator)
        self.token_path = self.emulator.write_token(root / "token.json")
        self.stderr_path = root / "server-stderr.log"
        self.timeout_s = timeout_s
        self.stdout = StdoutWatch()
        self.client: Client | None = None

    def env(self) -> dict[str, str]:
        return server_env(self.emulator, self.token_path, GMAIL_MCP_TIMEOUT_S=str(self.timeout_s))

    def stop_emulator(self) -> None:
        self.secrets.close()
        self.emulator.stop()

    def start_emulator_again(self) -> None:
        """A new emulator on the same port (fresh access tokens; the refresh token is the same fixed one)."""
        from server.emulator import start_emulator

        port = int(self.emulator.url.rsplit(":", 1)[1])
        self.emulator = start_emulator(self.mailbox, port=port)
        self.secrets = SecretWatch(self.emulator)

    def restore_token_file(self) -> None:
        if self.token_path.is_dir():
            self.token_path.rmdir()
        self.token_path.unlink(missing_ok=True)
        self.emulator.write_token(self.token_path)

    async def call(self, tool: str, arguments: dict[str, Any], *, budget_s: float) -> tuple[Any, float]:
        """One tool call that must end (with any answer) within `budget_s` seconds."""
        import anyio

        assert self.client is not None
        started = time.monotonic()
        with anyio.fail_after(budget_s):
            result = await self.client.call_tool(tool, arguments)
        return result, time.monotonic() - started

    async def serves_next_call(self, case: str, *earlier: Any) -> None:
        """After a fault clears, the same session answers a normal search; nothing leaked; stdout stayed clean."""
        self.emulator.reset()
        result, _ = await self.call(SEARCH, {"query": "in:inbox", "max_results": 2}, budget_s=10)
        assert not result.is_error, result_text(result)
        assert result.structured_content["result_count"] == 2
        texts = {f"result {n}": result_text(r) for n, r in enumerate((*earlier, result))}
        texts["stderr"] = self.stderr_path.read_text(encoding="utf-8", errors="replace")
        assert self.secrets.leaks(texts) == []
        assert self.stdout.bad_lines == []
        tally("fault_case", case=case)

    async def warmed_up(self, timeout_s: float = 30) -> None:
        """Waits for the server's warm-up after `initialize` (its log line), so no warm-up request lands among
        the requests a fault case counts; then clears the emulator's log and faults."""
        import anyio

        done = {"gmail session ready", "warm-up stopped", "warm-up failed"}
        with anyio.fail_after(timeout_s):
            while not any(json.loads(line).get("event") in done for line in self._log_lines()):
                await anyio.sleep(0.02)
        self.emulator.reset()

    def _log_lines(self) -> list[str]:
        text = self.stderr_path.read_text(encoding="utf-8", errors="replace")
        return [line for line in text.splitlines() if line.startswith("{")]

    def retry_waits(self) -> list[float]:
        """The `wait_s` of every retry the server logged so far (JSON lines on its stderr)."""
        waits = []
        for line in self.stderr_path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("event") == "retrying Gmail request":
                waits.append(entry["wait_s"])
        return waits


@contextlib.asynccontextmanager
async def fault_stack(root: Path, *, timeout_s: float = 0.75) -> Any:
    """Yields a `FaultStack` whose MCP session is open; stops everything afterwards."""
    stack = FaultStack(root, timeout_s)
    try:
        with open(stack.stderr_path, "w", encoding="utf-8") as errlog, stack.stdout.watching():
            async with mcp_over_stdio(stack.env(), errlog) as client:
                stack.client = client
                await stack.warmed_up()
                yield stack
    finally:
        stack.stop_emulator()
