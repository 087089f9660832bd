"""One replica against three behind HAProxy: tool calls per second and p50/p95 latency under 60 concurrent callers,
against a slow Gmail, and the shared store's round trips per tool call.

    .venv/bin/python -m bench.replicas [--rtt-ms 100] [--callers 60] [--rounds 5] [--mode auto] [--auth oauth]

Starts the Gmail emulator (`--latency-ms RTT`, demo mailbox) as a subprocess, then `replicas` processes of
`python -m server.main --http` behind a real HAProxy on loopback (server/tests/support/replicas.py: round robin,
health checks on /healthz, routing on Mcp-Session-Id for handshake-era sessions). Each of `--callers` MCP clients
sends one call per round, all at once (searches and reads alternating); one untimed warm-up round, then `--rounds`
timed ones. Ratios come from one run: both sets run on the same machine one after the other.

Store round trips per tool call: with `--auth bearer` (the default) the replicas use static bearer tokens
(GMAIL_MCP_HTTP_TOKEN) and no tool call reaches the shared store, so the figure printed is 0 and says so. With
`--auth oauth` the replicas run `--auth oauth` on one real redis-server (`redis-server` from PATH, as the tests
start it; support/oauth_replicas.py), the person signs in once through HAProxy with the official client's
OAuthClientProvider, and every caller uses that access token; the commands the redis-server processed during
the timed rounds (its `INFO commandstats`, the bench's own INFO aside) divided by the tool calls is the figure
(target: at most 2 on a warm read), printed with the commands it is made of. Exits non-zero when a call fails.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # a path run cannot import `bench`: say how to run it instead
    sys.exit("Run it from the checkout as a module: python -m bench.replicas")

from bench.harness import emulator_process, percentile
from bench.http_bench import load_parser, print_checks
from server.tests.support.http_server import mcp_client
from server.tests.support.replicas import ReplicaSet, haproxy_binary, replica_set

TOKEN = "bench-token-0123456789abcdef0123"
SEARCH, GET = "gmail_search_messages", "gmail_get_message"
# What redis-py sends when it opens a pooled connection, not per call: reported apart.
CONNECTION_SETUP = frozenset({"hello", "client|setname", "auth", "select"})


@dataclass
class Outcome:
    replicas: int
    latencies_ms: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    errors: list[str] = field(default_factory=list)
    served: list[int] = field(default_factory=list)  # tool calls each replica served (its log)
    store_commands: dict[str, int] = field(default_factory=dict)  # --auth oauth: redis commands in the timed rounds

    @property
    def calls(self) -> int:
        return len(self.latencies_ms) + len(self.errors)

    @property
    def per_second(self) -> float:
        return self.calls / self.wall_s if self.wall_s else 0.0


async def one_round(clients: list[Any], ids: list[str], outcome: Outcome | None) -> None:
    async def call(number: int, client: Any) -> None:
        if number % 2:
            tool, arguments = GET, {"message_id": ids[number % len(ids)]}
        else:
            tool, arguments = SEARCH, {"query": f"newer_than:{3650 + number}d", "max_results": 10}
        started = time.perf_counter()
        try:
            result = await client.call_tool(tool, arguments)
        except Exception as exc:  # a failed call is counted and reported, not raised
            if outcome is not None:
                outcome.errors.append(f"{type(exc).__name__}: {exc}"[:200])
            return
        if outcome is None:
            return
        if result.is_error:
            outcome.errors.append(result.content[0].text[:200])
        else:
            outcome.latencies_ms.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(call(number, client) for number, client in enumerate(clients)))
    if outcome is not None:
        outcome.wall_s += time.perf_counter() - started


def store_commands(store_url: str | None) -> dict[str, int]:
    """{command: calls so far} at the redis-server (`INFO commandstats`), the INFO commands aside; {} without one."""
    if store_url is None:
        return {}
    import redis

    with redis.Redis.from_url(store_url) as raw:
        stats = raw.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(row["calls"]) for name, row in stats.items() if name != "cmdstat_info"}


async def measure(emulator: Any, scratch: Path, count: int, args: argparse.Namespace, store: Any) -> Outcome:
    outcome = Outcome(count)
    env = {"GMAIL_MCP_LOG_LEVEL": "INFO", "GMAIL_MCP_HTTP_MAX_CONCURRENT": "200"}
    if store is None:
        env["GMAIL_MCP_HTTP_TOKEN"] = TOKEN
        replicas_of: Any = replica_set(emulator, scratch / f"set-{count}", count=count, extra_env=env)
    else:
        from server.tests.support.oauth_replicas import oauth_replica_set

        owner = emulator.info()["email"]
        folder = scratch / f"set-{count}"
        replicas_of = oauth_replica_set(emulator, folder, store.url, allowed=owner, count=count, extra_env=env)
    with replicas_of as replicas:
        async with AsyncExitStack() as stack:
            bearer = {"Authorization": f"Bearer {await access_token(replicas, emulator, store)}"}
            clients = [
                await stack.enter_async_context(mcp_client(replicas.url, args.mode, bearer))
                for _ in range(args.callers)
            ]
            sample = await clients[0].call_tool(SEARCH, {"query": "in:inbox", "max_results": 50})
            if sample.is_error:
                raise RuntimeError(f"the first search failed: {sample.content[0].text}")
            ids = [item["id"] for item in sample.structured_content["messages"]]
            await one_round(clients, ids, None)
            before, commands = replicas.tool_ends(), store_commands(store and store.url)
            for _ in range(args.rounds):
                await one_round(clients, ids, outcome)
            outcome.served = [now - then for now, then in zip(replicas.tool_ends(), before, strict=True)]
            after = store_commands(store and store.url)
            outcome.store_commands = {
                name: calls - commands.get(name, 0) for name, calls in after.items() if calls > commands.get(name, 0)
            }
    return outcome


async def access_token(replicas: ReplicaSet, emulator: Any, store: Any) -> str:
    """The static token, or (`--auth oauth`) an access token the person gets by signing in through HAProxy."""
    if store is None:
        return TOKEN
    from server.tests.support.oauth_replicas import sign_in

    storage, _, _ = await sign_in(replicas.url, emulator.info()["email"])
    assert storage.tokens is not None
    return storage.tokens.access_token


def report(outcomes: list[Outcome], args: argparse.Namespace) -> bool:
    print(
        f"\n{args.callers} callers, one call each per round, all at once (searches and reads alternating), "
        f"{args.rounds} timed rounds; emulated Gmail RTT {args.rtt_ms:g} ms; mode {args.mode}; auth {args.auth}; "
        "HAProxy round robin.\n"
    )
    print(f"{'replicas':<10}{'calls':>6}{'calls/s':>9}{'p50 ms':>9}{'p95 ms':>9}{'errors':>8}  served by each")
    print("-" * 72)
    for outcome in outcomes:
        values = outcome.latencies_ms or [float("nan")]
        print(
            f"{outcome.replicas:<10}{outcome.calls:>6}{outcome.per_second:>9.1f}{statistics.median(values):>9.1f}"
            f"{percentile(values, 0.95):>9.1f}{len(outcome.errors):>8}  {outcome.served}"
        )
    one, many = outcomes[0], outcomes[-1]
    print(
        f"\n{many.replicas} replicas / 1: calls/s x{many.per_second / max(one.per_second, 1e-9):.2f}, p95 "
        f"x{percentile(many.latencies_ms or [0], 0.95) / max(percentile(one.latencies_ms or [1], 0.95), 1e-9):.2f}"
    )
    if args.auth == "bearer":
        print(
            "store round trips per tool call: 0 (static bearer tokens: no tool call reaches the shared store; it "
            "holds the state of --auth oauth; run with --auth oauth to count them)"
        )
    for outcome in outcomes if args.auth == "oauth" else []:
        calls = {name: count for name, count in outcome.store_commands.items() if name not in CONNECTION_SETUP}
        setup = sum(count for name, count in outcome.store_commands.items() if name in CONNECTION_SETUP)
        made_of = ", ".join(f"{name} {count}" for name, count in sorted(calls.items()))
        print(
            f"store round trips per tool call, {outcome.replicas} replica(s), warm: "
            f"{sum(calls.values()) / max(outcome.calls, 1):.2f} ({made_of or 'none'} for {outcome.calls} calls; "
            f"target at most 2) + {setup} connection set-up commands (new pooled connections)"
        )
    failures = [error for outcome in outcomes for error in outcome.errors[:3]]
    return print_checks([(f"all {sum(o.calls for o in outcomes)} calls succeeded", not failures)], failures)


async def run(args: argparse.Namespace) -> bool:
    if haproxy_binary() is None:
        sys.exit("no haproxy on PATH (Debian: apt-get install haproxy)")
    with tempfile.TemporaryDirectory(prefix="gmail-replicas-bench-") as scratch_dir:
        scratch = Path(scratch_dir)
        with ExitStack() as stack:
            emulator = stack.enter_context(emulator_process(args.rtt_ms, scratch))
            store = None
            if args.auth == "oauth":
                from server.tests.support.redis_server import RedisServer, server_binary

                binary = server_binary()
                if binary is None:
                    sys.exit("--auth oauth needs redis-server or valkey-server on PATH (Debian: apt-get install redis)")
                store = RedisServer(binary, scratch / "redis").start()
                stack.callback(store.stop)
            outcomes = [await measure(emulator, scratch, count, args, store) for count in (1, args.replicas)]
    return report(outcomes, args)


def main(argv: list[str] | None = None) -> int:
    parser = load_parser("replicas", __doc__, rounds=5)
    parser.add_argument("--callers", type=int, default=60, help="concurrent MCP clients (default 60)")
    parser.add_argument("--replicas", type=int, default=3, help="replicas in the second set (default 3)")
    parser.add_argument(
        "--auth",
        choices=["bearer", "oauth"],
        default="bearer",
        help="static bearer tokens (default), or --auth oauth replicas on a redis-server (counts store round trips)",
    )
    args = parser.parse_args(argv)
    return 0 if asyncio.run(run(args)) else 1


if __name__ == "__main__":
    sys.exit(main())
