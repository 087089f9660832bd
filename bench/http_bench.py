"""Tool calls over streamable HTTP (one shared server) next to the same calls over stdio (one server per client,
as desktop clients run it): requests per second and p50/p95 latency, against a slow Gmail.

    .venv/bin/python -m bench.http_bench [--rtt-ms 100] [--clients 5] [--concurrency 10] [--rounds 4] [--mode auto]

Starts the Gmail emulator (`--latency-ms RTT`, demo mailbox) as a subprocess, then `python -m server.main --http`
(one process, every client over HTTP with a bearer token) and, for comparison, one `python -m server.main`
per client over stdio. Two loads: concurrent (each of `--clients` clients sends `--concurrency` calls at once,
searches and reads alternating, one untimed warm-up round and `--rounds` timed ones) and sequential (one client,
one search at a time: what HTTP adds to a single call). Exits non-zero when a call fails or a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # a path run cannot import `bench`: say how to run it instead
    sys.exit("Run it from the checkout as a module: python -m bench.http_bench")

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.harness import ROOT, emulator_process, percentile, server_env
from server.tests.support.http_server import http_server, mcp_client

TOKEN = "bench-token-0123456789abcdef0123"
SEARCH, GET = "gmail_search_messages", "gmail_get_message"
# One HTTP process does the work that stdio spreads over one process per client: on a machine with few cores the
# GIL makes it slower per call. The target is that sharing one server costs at most half the throughput.
THROUGHPUT_RATIO_TARGET = 0.5
SEQUENTIAL_P50_RATIO_TARGET = 1.15  # one call at a time, HTTP adds little to what Gmail's round trips cost
SEQUENTIAL_CALLS = 20


@dataclass(frozen=True)
class Load:
    name: str
    clients: int
    concurrency: int
    rounds: int


@dataclass
class Outcome:
    transport: str
    load: Load
    latencies_ms: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return len(self.latencies_ms) + len(self.errors)

    @property
    def per_second(self) -> float:
        return self.calls / self.wall_s if self.wall_s else 0.0


def workload(ids: list[str], client_number: int, concurrency: int) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for index in range(concurrency):
        if index % 2:
            calls.append((GET, {"message_id": ids[(client_number * concurrency + index) % len(ids)]}))
        else:
            calls.append((SEARCH, {"query": f"newer_than:{3650 + index}d", "max_results": 10}))
    return calls


async def one_round(clients: list[Client], ids: list[str], concurrency: int, outcome: Outcome | None) -> None:
    async def call(client: Client, tool: str, arguments: dict[str, Any]) -> None:
        started = time.perf_counter()
        result = await client.call_tool(tool, arguments)
        if outcome is None:
            return
        if result.is_error:
            outcome.errors.append(result.content[0].text[:200])
        else:
            outcome.latencies_ms.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(
        *(
            call(client, tool, arguments)
            for number, client in enumerate(clients)
            for tool, arguments in workload(ids, number, concurrency)
        )
    )
    if outcome is not None:
        outcome.wall_s += time.perf_counter() - started


async def drive(transport: str, opener: Callable[[], Any], loads: list[Load]) -> list[Outcome]:
    """Opens the clients, finds message ids, warms up (untimed), then times each load's rounds."""
    outcomes = []
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(opener()) for _ in range(max(load.clients for load in loads))]
        sample = await clients[0].call_tool(SEARCH, {"query": "in:inbox", "max_results": 50})
        if sample.is_error:
            raise RuntimeError(f"{transport}: the first search failed: {sample.content[0].text}")
        ids = [item["id"] for item in sample.structured_content["messages"]]
        for load in loads:
            outcome = Outcome(transport, load)
            await one_round(clients[: load.clients], ids, load.concurrency, None)
            for _ in range(load.rounds):
                await one_round(clients[: load.clients], ids, load.concurrency, outcome)
            outcomes.append(outcome)
    return outcomes


@asynccontextmanager
async def stdio_clients(env: dict[str, str], mode: str, log: Path) -> AsyncIterator[Callable[[], Any]]:
    with open(log, "w", encoding="utf-8") as errlog:

        def opener() -> Any:
            params = StdioServerParameters(command=sys.executable, args=["-m", "server.main"], env=env, cwd=str(ROOT))
            return Client(stdio_client(params, errlog=errlog), mode=mode)

        yield opener


def report(outcomes: list[Outcome], args: argparse.Namespace) -> bool:
    print(
        f"\nconcurrent: searches and reads alternating; sequential: one search at a time. Emulated Gmail RTT "
        f"{args.rtt_ms:g} ms (search: 2 RT, read: 1 RT), mode {args.mode}. HTTP: one server for all clients, "
        "stdio: one server per client.\n"
    )
    print(
        f"{'load':<24}{'transport':<10}{'clients x calls':<17}{'calls':>6}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'errors':>8}"
    )
    print("-" * 91)
    for outcome in outcomes:
        values = outcome.latencies_ms or [float("nan")]
        load = outcome.load
        print(
            f"{load.name:<24}{outcome.transport:<10}{f'{load.clients} x {load.concurrency}':<17}{outcome.calls:>6}"
            f"{outcome.per_second:>8.1f}{statistics.median(values):>9.1f}{percentile(values, 0.95):>9.1f}"
            f"{len(outcome.errors):>8}"
        )
    by_key = {(outcome.load.name, outcome.transport): outcome for outcome in outcomes}
    failures = [f"{outcome.transport}: {error}" for outcome in outcomes for error in outcome.errors[:3]]
    concurrent = by_key["concurrent", "HTTP"].per_second / max(by_key["concurrent", "stdio"].per_second, 1e-9)
    sequential = statistics.median(by_key["sequential", "HTTP"].latencies_ms or [0]) / statistics.median(
        by_key["sequential", "stdio"].latencies_ms or [1]
    )
    checks = [
        (f"all {sum(o.calls for o in outcomes)} calls succeeded", not failures),
        (
            f"sequential: HTTP p50 / stdio p50 = {sequential:.2f} (target <= {SEQUENTIAL_P50_RATIO_TARGET})",
            sequential <= SEQUENTIAL_P50_RATIO_TARGET,
        ),
        (
            f"concurrent: HTTP req/s / stdio req/s = {concurrent:.2f} (target >= {THROUGHPUT_RATIO_TARGET}; one "
            f"process and its GIL against {args.clients})",
            concurrent >= THROUGHPUT_RATIO_TARGET,
        ),
    ]
    return print_checks(checks, failures)


def print_checks(checks: list[tuple[str, bool]], failures: list[str]) -> bool:
    """Each check (its text, whether it holds) with PASS or FAIL, then the failed calls' errors: True if all hold."""
    print()
    for text, ok in checks:
        print(f"{text}: {'PASS' if ok else 'FAIL'}")
    for failure in failures:
        print("  " + failure)
    return all(ok for _, ok in checks)


async def run(args: argparse.Namespace) -> bool:
    with tempfile.TemporaryDirectory(prefix="gmail-http-bench-") as scratch_dir:
        scratch = Path(scratch_dir)
        with emulator_process(args.rtt_ms, scratch) as emulator:
            env = server_env(emulator)
            loads = [
                Load("concurrent", args.clients, args.concurrency, args.rounds),
                Load("sequential", 1, 1, SEQUENTIAL_CALLS),
            ]
            with http_server({**env, "GMAIL_MCP_HTTP_TOKEN": TOKEN}) as server:
                http = await drive(
                    "HTTP", lambda: mcp_client(server.url, args.mode, {"Authorization": f"Bearer {TOKEN}"}), loads
                )
            async with stdio_clients(env, args.mode, scratch / "stdio.log") as opener:
                stdio = await drive("stdio", opener, loads)
    return report([*http, *stdio], args)


def load_parser(module: str, doc: str, rounds: int) -> argparse.ArgumentParser:
    """The options of an HTTP load bench (`python -m bench.<module>`, described by its docstring's first line):
    --rtt-ms, --rounds (default `rounds`), --mode; each bench adds its own."""
    parser = argparse.ArgumentParser(prog=f"python -m bench.{module}", description=doc.splitlines()[0])
    parser.add_argument("--rtt-ms", type=float, default=100, help="emulated network round trip (default 100)")
    parser.add_argument("--rounds", type=int, default=rounds, help=f"timed rounds after the warm-up (default {rounds})")
    parser.add_argument("--mode", choices=["legacy", "auto"], default="auto", help="MCP protocol era")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = load_parser("http_bench", __doc__, rounds=4)
    parser.add_argument("--clients", type=int, default=5, help="MCP clients (default 5)")
    parser.add_argument("--concurrency", type=int, default=10, help="calls each client sends at once (default 10)")
    args = parser.parse_args(argv)
    return 0 if asyncio.run(run(args)) else 1


if __name__ == "__main__":
    sys.exit(main())
