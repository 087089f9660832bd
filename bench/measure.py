"""The measurements: timed tool calls over stdio, the naive baseline, overhead at RTT 0, cold start, sizes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.harness import (
    ROOT,
    EmulatorProcess,
    child_pid,
    cpu_ms,
    describe_requests,
    round_trips,
    server_env,
    tool_end_latencies,
)
from bench.naive import naive_search, naive_service


@dataclass(frozen=True)
class Scenario:
    name: str
    tool: str
    arguments: dict[str, Any]
    ideal_trips: int  # the physical limit for this task: list + batch for a search, one get for a read
    paged: bool = False  # continue from the next_page_token of the first page
    needs_id: bool = False  # read the newest message of the search


@dataclass
class Row:
    """One scenario's figures across its runs."""

    name: str
    ideal_trips: int
    walls_ms: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    trips: list[int] = field(default_factory=list)
    shape: str = ""
    new_connections: int = 0


# search_bench.py times the request strategy of each call: repeating one search 20 times would otherwise time
# the search cache's history check (1 request) instead. cache_bench.py measures the caches.
NO_CACHES = {"GMAIL_MCP_SEARCH_CACHE_SIZE": "0", "GMAIL_MCP_SUMMARY_CACHE_ENTRIES": "0"}


def _client(emulator: EmulatorProcess, mode: str, errlog: Any) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "server.main"], env={**server_env(emulator), **NO_CACHES}, cwd=str(ROOT)
    )
    return Client(stdio_client(params, errlog=errlog), mode=mode)  # type: ignore[arg-type]


def _arguments(scenario: Scenario, page_token: str, message_id: str) -> dict[str, Any]:
    arguments = dict(scenario.arguments)
    if scenario.paged:
        arguments["page_token"] = page_token
    if scenario.needs_id:
        arguments["message_id"] = message_id
    return arguments


async def _warm_up(client: Client) -> tuple[Any, str, str]:
    """First calls (token refresh, connection, imports) happen here, untimed; returns a sample and fixtures."""
    await client.list_tools()
    sample = await client.call_tool("gmail_search_messages", {"query": "in:inbox", "max_results": 10})
    if sample.is_error:
        raise RuntimeError(f"warm-up search failed: {sample.content[0].text}")
    first = sample.structured_content["messages"][0]["id"]
    await client.call_tool("gmail_get_message", {"message_id": first})
    return sample, sample.structured_content["next_page_token"], first


async def measure_scenarios(
    emulator: EmulatorProcess, scenarios: list[Scenario], *, runs: int, mode: str, log: Path
) -> tuple[list[Row], Any]:
    """Each scenario `runs` times against one long-lived server; requests and round trips from the log."""
    rows = []
    with open(log / "server-rtt.log", "w") as errlog:
        async with _client(emulator, mode, errlog) as client:
            sample, page_token, message_id = await _warm_up(client)
            for scenario in scenarios:
                row = Row(scenario.name, scenario.ideal_trips)
                arguments = _arguments(scenario, page_token, message_id)
                connections = emulator.info()["connections_accepted"]
                for _ in range(runs):
                    since = emulator.last_seq()
                    started = time.perf_counter()
                    result = await client.call_tool(scenario.tool, arguments)
                    row.walls_ms.append((time.perf_counter() - started) * 1000)
                    if result.is_error:
                        raise RuntimeError(f"{scenario.name} failed: {result.content[0].text}")
                    entries = emulator.requests(since)
                    row.requests.append(len(entries))
                    row.trips.append(round_trips(entries))
                    row.shape = describe_requests(entries)
                row.new_connections = emulator.info()["connections_accepted"] - connections
                rows.append(row)
    return rows, sample


def measure_naive(emulator: EmulatorProcess, query: str, k: int, *, runs: int) -> Row:
    service = naive_service(emulator.url, emulator.token_uri, emulator.token_path)
    naive_search(service, query, k)  # warm-up: token refresh and connection
    row = Row(f"naive: list + {k} gets", 2)
    for _ in range(runs):
        since = emulator.last_seq()
        started = time.perf_counter()
        naive_search(service, query, k)
        row.walls_ms.append((time.perf_counter() - started) * 1000)
        entries = emulator.requests(since)
        row.requests.append(len(entries))
        row.trips.append(round_trips(entries))
        row.shape = describe_requests(entries)
    return row


@dataclass
class Overhead:
    """One scenario at RTT 0: the server's CPU per call, and its own latency minus the emulator's time."""

    cpu_ms: list[float] = field(default_factory=list)
    outside_gmail_ms: list[float] = field(default_factory=list)


async def measure_overhead(
    emulator: EmulatorProcess, scenarios: list[Scenario], *, runs: int, mode: str, log: Path
) -> dict[str, Overhead]:
    """What the server adds per call at RTT 0, measured two ways.

    CPU: the server process's CPU time across the call (all threads, from /proc). Outside Gmail: the server's own
    `tool end` latency minus the time the emulator logged for the call's requests; an upper bound, since it
    also holds loopback I/O and the emulator's HTTP parsing, which its log does not time.
    """
    log_path = log / "server-rtt0.log"
    per_call: list[tuple[str, float]] = []
    figures: dict[str, Overhead] = {scenario.name: Overhead() for scenario in scenarios}
    with open(log_path, "w") as errlog:
        async with _client(emulator, mode, errlog) as client:
            _, page_token, message_id = await _warm_up(client)
            pid = child_pid("server.main")
            for scenario in scenarios:
                arguments = _arguments(scenario, page_token, message_id)
                for _ in range(runs):
                    since = emulator.last_seq()
                    cpu_before = cpu_ms(pid) if pid else 0.0
                    await client.call_tool(scenario.tool, arguments)
                    if pid:
                        figures[scenario.name].cpu_ms.append(cpu_ms(pid) - cpu_before)
                    emulator_ms = sum(entry["duration_ms"] or 0 for entry in emulator.requests(since))
                    per_call.append((scenario.name, emulator_ms))
    latencies = tool_end_latencies(log_path)[-len(per_call) :]  # drop the warm-up calls
    for (name, emulator_ms), latency_ms in zip(per_call, latencies, strict=True):
        figures[name].outside_gmail_ms.append(max(0.0, latency_ms - emulator_ms))
    return figures


def cold_start(
    emulator: EmulatorProcess, *, runs: int, extra_env: dict[str, str] | None = None
) -> tuple[list[float], int]:
    """Process start to the answer of the first tools/list (raw JSON-RPC over the pipe); and that answer's size."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    times, size = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "server.main"],
            cwd=ROOT,
            env={**server_env(emulator), **(extra_env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(payload.encode())
        process.stdin.flush()
        while True:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError("the server closed stdout before answering tools/list")
            if json.loads(line).get("id") == 2:
                break
        times.append(time.perf_counter() - started)
        size = len(json.dumps(json.loads(line)["result"], separators=(",", ":"), ensure_ascii=False).encode())
        process.stdin.close()
        process.wait(timeout=10)
    return times, size


@dataclass(frozen=True)
class Sizes:
    text_bytes: int
    enriched: int
    max_result_bytes: int
    structured_bytes: int
    nulls_in_structured: int
    thread_ids_in_text: int


def _nulls(value: Any) -> int:
    if value is None:
        return 1
    if isinstance(value, dict):
        return sum(_nulls(item) for item in value.values())
    if isinstance(value, list):
        return sum(_nulls(item) for item in value)
    return 0


def output_sizes(sample: Any) -> Sizes:
    """Bytes of a 10-result search answer: its text content and its structuredContent (compact JSON, UTF-8)."""
    # Text blocks only: the resource links a search adds (one per result) are not text the model reads.
    text = "\n".join(block.text for block in sample.content if getattr(block, "type", "") == "text")
    structured = sample.structured_content
    messages = structured["messages"]
    enriched = [m for m in messages if m.get("subject") is not None or m.get("from_email") is not None]
    # A result's own lines: "N. id | ..." and its indented snippet line (header and footer lines excluded).
    blocks: list[str] = []
    for line in text.splitlines():
        if line.split(". ", 1)[0].isdigit():
            blocks.append(line)
        elif line.startswith(" ") and blocks:
            blocks[-1] += "\n" + line
    widest = max((len(block.encode()) + 1 for block in blocks), default=0)
    leaked = sum(1 for m in messages if m["thread_id"] != m["id"] and m["thread_id"] in text)
    return Sizes(
        text_bytes=len(text.encode()),
        enriched=len(enriched),
        max_result_bytes=widest,
        structured_bytes=len(json.dumps(structured, separators=(",", ":"), ensure_ascii=False).encode()),
        nulls_in_structured=_nulls(structured),
        thread_ids_in_text=leaked,
    )
