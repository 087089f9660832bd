"""The moving parts of a benchmark run: an emulator subprocess, a server subprocess, and what they record.

Both run as their own processes so the benchmark process (the MCP client) competes with neither for the GIL;
the emulator's request log, read over its control plane, is the ground truth for requests and round trips.
"""

from __future__ import annotations

import http.client
import itertools
import json
import math
import os
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.tests.support.emulator import emulator_env

ROOT = Path(__file__).resolve().parent.parent
DEMO_MAILBOX = ROOT / "server" / "demo" / "mailbox.mbox"


@dataclass
class EmulatorProcess:
    """`python -m server.emulator` on the demo mailbox, with the control plane as methods.

    The control plane is read over one kept-alive connection, so `connections_accepted` grows only when the
    server (or the baseline) opens a connection.
    """

    url: str
    token_path: Path
    process: subprocess.Popen[str]
    _control: http.client.HTTPConnection | None = None
    _seen: int = 0

    @property
    def token_uri(self) -> str:
        return self.url + "/token"

    def _get(self, name: str) -> Any:
        if self._control is None:
            address = urllib.parse.urlsplit(self.url)
            self._control = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=10)
        self._control.request("GET", f"/_emulator/{name}")
        return json.loads(self._control.getresponse().read())

    def post(self, name: str, payload: dict[str, Any] | None = None) -> Any:
        """POST to the control plane (`deliver`, `expire-history`, ...) over the same kept-alive connection."""
        self._get("info")  # opens the connection if needed
        assert self._control is not None
        body = json.dumps(payload or {}).encode()
        self._control.request("POST", f"/_emulator/{name}", body=body, headers={"Content-Type": "application/json"})
        return json.loads(self._control.getresponse().read())

    def requests(self, since: int = 0) -> list[dict[str, Any]]:
        return list(self._get(f"requests?since={since}")["requests"])

    def last_seq(self) -> int:
        """The newest log entry's number (reads only the entries since the last look: the log grows)."""
        entries = self.requests(self._seen)
        if entries:
            self._seen = entries[-1]["seq"]
        return self._seen

    def info(self) -> dict[str, Any]:
        return dict(self._get("info"))


@contextmanager
def emulator_process(latency_ms: float, scratch: Path, mailbox: Path = DEMO_MAILBOX) -> Iterator[EmulatorProcess]:
    token_path = scratch / f"token-rtt{latency_ms:g}-{mailbox.stem}.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.emulator",
            "--mailbox",
            str(mailbox),
            "--rebase-dates",
            "--latency-ms",
            str(latency_ms),
            "--write-token",
            str(token_path),
            "--log-level",
            "WARNING",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the emulator did not start (first line: {url!r})")
        yield EmulatorProcess(url, token_path, process)
    finally:
        process.terminate()
        process.wait(timeout=10)


def server_env(emulator: EmulatorProcess) -> dict[str, str]:
    """Environment for `python -m server.main` pointed at the emulator (production log level).

    The client-side quota limiter (server/gmail/quota.py) is off unless GMAIL_MCP_QUOTA_UNITS_PER_S is set: the
    benchmark's back-to-back calls spend ~5 searches' worth of quota units a second, far beyond an assistant's
    pace, and would time the limiter's pacing instead of the request strategy.
    """
    return {
        "GMAIL_MCP_QUOTA_UNITS_PER_S": "0",
        **os.environ,
        "PYTHONPATH": str(ROOT),
        **emulator_env(emulator, emulator.token_path),
        "GMAIL_MCP_LOG_LEVEL": "INFO",
    }


def round_trips(entries: Sequence[dict[str, Any]]) -> int:
    """Sequential round trips: requests whose time on the server overlaps count once (they ran in parallel)."""
    spans = sorted((e["started_at"], e["started_at"] + (e["duration_ms"] or 0) / 1000) for e in entries)
    trips, end = 0, -math.inf
    for start, finish in spans:
        if start >= end:
            trips += 1
            end = finish
        else:
            end = max(end, finish)
    return trips


def describe_requests(entries: Sequence[dict[str, Any]]) -> str:
    """`list + batch(10)` style summary of one call's requests (`list + 10 x get` for repeats)."""
    names: list[str] = []
    for entry in entries:
        path = entry["path"]
        if entry.get("batch_parts") is not None:
            names.append(f"batch({entry['batch_parts']})")
        elif path == "/token":
            names.append("token")
        elif path.endswith("/messages"):
            names.append("list")
        elif path.endswith("/history"):
            names.append("history")
        elif path.endswith("/profile"):
            names.append("profile")
        else:
            names.append("get")
    grouped = []
    for name, run in itertools.groupby(names):
        count = len(list(run))
        grouped.append(f"{count} x {name}" if count > 1 else name)
    return " + ".join(grouped) or "-"


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (p95 of 20 values is the 19th smallest)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def tool_end_latencies(log_path: Path) -> list[float]:
    """The server's own `tool end` latencies (ms), in call order, from its JSON-lines stderr log."""
    latencies = []
    for line in log_path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("event") == "tool end":
            latencies.append(float(entry["latency_ms"]))
    return latencies


def child_pid(module: str) -> int | None:
    """The pid of this process's child running `python -m <module>` (Linux /proc), or None."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = stat.rsplit(")", 1)[1].split()[1]
        if parent == me and module.encode() in cmdline:
            return int(entry.name)
    return None


def cpu_ms(pid: int) -> float:
    """CPU time a process has used so far, all threads, in ms (nanosecond-precise schedstat, not 10 ms ticks)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a worker thread that just ended
    return total / 1e6
