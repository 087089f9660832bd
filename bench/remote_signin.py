"""Remote sign-in (`--http --auth oauth`): what a person's first sign-in costs, and what 20 signed-in people cost
next to the same calls over static bearer tokens, against the emulator playing Google and Gmail at a slow RTT.

    .venv/bin/python -m bench.remote_signin [--rtt-ms 100] [--people 20] [--concurrency 2] [--rounds 4] [--mode auto]

Starts `bench.people_emulator` (one demo mailbox per person, `--latency-ms RTT` on every Google and Gmail round
trip) as a subprocess, then `python -m server.main --http 127.0.0.1:0` twice:

- static bearer: `GMAIL_MCP_HTTP_TOKEN_FILE` with one token per person, each reaching only that person's account
  (`token.json` and `tokens/personNN.json`), the isolation the static mode offers;
- OAuth: `--auth oauth`, each person signed in with the official MCP client's OAuth support.

Loads: throughput (each person's client sends `--concurrency` calls at once, searches and reads alternating, one
untimed warm-up round and `--rounds` timed ones); then one person's sign-in to first tool result. Exits non-zero
when a call fails or a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # a path run cannot import `bench`: say how to run it instead
    sys.exit("Run it from the checkout as a module: python -m bench.remote_signin")

from bench.harness import EmulatorProcess, percentile, server_env
from bench.http_bench import SEARCH, Load, Outcome, one_round
from bench.people_emulator import account_name, people_emulator, token_path
from server.tests.support.http_server import http_server, mcp_client


def static_env(emulator: EmulatorProcess, scratch: Path, people: int) -> tuple[dict[str, str], list[str]]:
    """The server's environment for the static-bearer run, and each person's token (index = person)."""
    secrets_by_person = [f"bench-person{number:02d}-{secrets.token_hex(12)}" for number in range(people)]
    lines = [f"{secret} {account_name(number)}" for number, secret in enumerate(secrets_by_person)]
    token_file = scratch / "http-tokens"
    token_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {
        **server_env(emulator),
        "GMAIL_TOKEN_PATH": str(token_path(scratch, 0)),
        "GMAIL_MCP_TOKEN_DIR": str(token_path(scratch, 1).parent),
        "GMAIL_MCP_HTTP_TOKEN_FILE": str(token_file),
    }
    return env, secrets_by_person


async def throughput(transport: str, openers: list[Callable[[], Any]], load: Load) -> Outcome:
    """Opens one client per person, finds message ids, warms up (untimed), then times the load's rounds."""
    outcome = Outcome(transport, load)
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(opener()) for opener in openers]
        sample = await clients[0].call_tool(SEARCH, {"query": "in:inbox", "max_results": 50})
        if sample.is_error:
            raise RuntimeError(f"{transport}: the first search failed: {sample.content[0].text}")
        ids = [item["id"] for item in sample.structured_content["messages"]]
        await one_round(clients, ids, load.concurrency, None)
        for _ in range(load.rounds):
            await one_round(clients, ids, load.concurrency, outcome)
    return outcome


def throughput_line(outcome: Outcome) -> str:
    values = outcome.latencies_ms or [float("nan")]
    load = outcome.load
    return (
        f"{outcome.transport:<16}{f'{load.clients} x {load.concurrency}':<17}{outcome.calls:>6}"
        f"{outcome.per_second:>8.1f}{statistics.median(values):>9.1f}{percentile(values, 0.95):>9.1f}"
        f"{len(outcome.errors):>8}"
    )


async def run(args: argparse.Namespace) -> bool:
    load = Load("throughput", args.people, args.concurrency, args.rounds)
    with tempfile.TemporaryDirectory(prefix="gmail-remote-bench-") as scratch_dir:
        scratch = Path(scratch_dir)
        with people_emulator(args.people, args.rtt_ms, scratch) as emulator:
            env, tokens = static_env(emulator, scratch, args.people)
            with http_server(env) as server:
                openers = [
                    (lambda token=token: mcp_client(server.url, args.mode, {"Authorization": f"Bearer {token}"}))
                    for token in tokens
                ]
                static = await throughput("static bearer", openers, load)
    print(f"{'transport':<16}{'people x calls':<17}{'calls':>6}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'errors':>8}")
    print(throughput_line(static))
    return not static.errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.remote_signin", description=__doc__.splitlines()[0])
    parser.add_argument("--rtt-ms", type=float, default=100, help="emulated network round trip (default 100)")
    parser.add_argument("--people", type=int, default=20, help="people signed in at once (default 20)")
    parser.add_argument("--concurrency", type=int, default=2, help="calls each person's client sends at once")
    parser.add_argument("--rounds", type=int, default=4, help="timed rounds after the warm-up (default 4)")
    parser.add_argument("--mode", choices=["legacy", "auto"], default="auto", help="MCP protocol era")
    args = parser.parse_args(argv)
    return 0 if asyncio.run(run(args)) else 1


if __name__ == "__main__":
    sys.exit(main())
