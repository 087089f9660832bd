"""Search and read at the physical limit: requests, round trips and wall time of the real server over stdio.

    .venv/bin/python -m bench.search_bench [--rtt-ms 100] [--runs 20] [--mode legacy|auto]

Starts the Gmail emulator (`--latency-ms RTT`, demo mailbox) and `python -m server.main` as subprocesses, drives
the server with the MCP Python client, and reads requests and round trips from the emulator's request log.
A second emulator at RTT 0 gives the server's own overhead per call; raw JSON-RPC over a pipe gives cold start
and the size of the tools/list answer. Prints one table of scenarios and one of figures, with targets.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # a path run cannot import `bench`: say how to run it instead
    sys.exit("Run it from the checkout as a module: python -m bench.search_bench")

from bench.harness import emulator_process
from bench.measure import (
    Scenario,
    cold_start,
    measure_naive,
    measure_overhead,
    measure_scenarios,
    output_sizes,
)
from bench.report import print_report

QUERY = "in:inbox"
K = 10


def scenarios() -> list[Scenario]:
    return [
        Scenario("search max 10 (K=10)", "gmail_search_messages", {"query": QUERY, "max_results": 10}, 2),
        Scenario("search max 50 (K=10)", "gmail_search_messages", {"query": QUERY, "max_results": 50}, 2),
        Scenario("search page_token", "gmail_search_messages", {"query": QUERY, "max_results": 10}, 2, paged=True),
        Scenario("get full", "gmail_get_message", {"format": "full"}, 1, needs_id=True),
        Scenario("get metadata", "gmail_get_message", {"format": "metadata"}, 1, needs_id=True),
    ]


async def run(args: argparse.Namespace) -> bool:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gmail-bench-") as scratch_dir:
        scratch = Path(scratch_dir)
        with emulator_process(args.rtt_ms, scratch) as slow, emulator_process(0, scratch) as fast:
            rows, sample = await measure_scenarios(slow, scenarios(), runs=args.runs, mode=args.mode, log=scratch)
            naive = measure_naive(slow, QUERY, K, runs=args.runs)
            overhead = await measure_overhead(fast, scenarios(), runs=max(args.runs, 50), mode=args.mode, log=scratch)
            cold, tools_list_bytes = cold_start(fast, runs=args.cold_runs)
    return print_report(
        rtt_ms=args.rtt_ms,
        runs=args.runs,
        mode=args.mode,
        rows=rows,
        naive=naive,
        overhead=overhead,
        cold_start_s=statistics.median(cold),
        cold_runs=len(cold),
        sizes=output_sizes(sample),
        tools_list_bytes=tools_list_bytes,
        elapsed_s=time.perf_counter() - started,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--rtt-ms", type=float, default=100, help="emulated network round trip (default 100)")
    parser.add_argument("--runs", type=int, default=20, help="timed calls per scenario (default 20, min 20)")
    parser.add_argument("--cold-runs", type=int, default=5, help="server starts for the cold-start median")
    parser.add_argument("--mode", choices=["legacy", "auto"], default="legacy", help="MCP protocol era")
    args = parser.parse_args(argv)
    if args.runs < 20:
        parser.error("--runs must be at least 20 (p95 needs them)")
    return 0 if asyncio.run(run(args)) else 1


if __name__ == "__main__":
    sys.exit(main())
