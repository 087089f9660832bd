"""Remote sign-in (`--http --auth oauth`): what a person's first sign-in costs, and what 20 signed-in people cost
next to the same calls over static bearer tokens, against the emulator playing Google and Gmail at a slow RTT.

    .venv/bin/python -m bench.remote_signin [--rtt-ms 100] [--people 20] [--concurrency 2] [--rounds 4] [--mode auto]

Starts `bench.people_emulator` (one demo mailbox and Google account per person, `--latency-ms RTT` on every
Google and Gmail round trip) as a subprocess, then `python -m server.main --http` twice, each its own process:

- static bearer: `GMAIL_MCP_HTTP_TOKEN_FILE` with one token per person, each reaching only that person's account
  (`token.json` and `tokens/personNN.json`), the isolation the static mode offers;
- OAuth: `--auth oauth` with the emulator's Web client; every person signs in with the official MCP client's OAuth
  support (`OAuthClientProvider`), this process playing the browser (Allow on the consent page, Google's consent
  as that person). The first sign-in registers the client (RFC 7591), the others reuse that registration: one app,
  many people, as claude.ai is.

Measured: one new person's sign-in to the answer of their first search (requests this process sent to the server,
requests the emulator served, sequential round trips among them, wall time); then throughput (each person's
client sends `--concurrency` calls at once, searches and reads alternating, one untimed warm-up round and
`--rounds` timed ones) for both modes. Exits non-zero when a call fails or a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import socket
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # a path run cannot import `bench`: say how to run it instead
    sys.exit("Run it from the checkout as a module: python -m bench.remote_signin")

import httpx2
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult

from bench.harness import EmulatorProcess, describe_requests, percentile, round_trips, server_env
from bench.http_bench import SEARCH, Load, Outcome, load_parser, one_round, print_checks
from bench.people_emulator import account_name, client_file_path, people_emulator, person, token_path
from server.tests.support.http_server import http_server, mcp_client
from server.tests.support.oauth_browser import at_google, form_fields, path_of, query_of
from server.tests.support.sdk_client import Memory, public_client

# What 20 signed-in people may cost next to 20 static tokens: checking an issued token (a state-store read) and
# binding the person's mailboxes per request, against a constant-time digest compare.
THROUGHPUT_RATIO_TARGET = 0.8
SIGN_IN_TRIPS_TARGET = 5  # emulator round trips from the client's first request to the first search's answer


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


@dataclass
class Traffic:
    """Requests this process sent to the server, by who sent them (`app`: the MCP client; `browser`)."""

    paths: Counter[str] = field(default_factory=Counter)

    def hook(self, who: str) -> Callable[[Any], Any]:
        async def record(response: Any) -> None:
            self.paths[f"{who} {response.request.method} {response.request.url.path}"] += 1

        return record

    def count(self, who: str) -> int:
        return sum(number for key, number in self.paths.items() if key.startswith(who + " "))


class Browser:
    """The person's browser: the authorization URL, this server's consent (Allow), Google's consent as `user`
    (the emulator consents for the hinted account), back to this server, which sends it on to the client."""

    def __init__(self, base: str, user: str, traffic: Traffic) -> None:
        self.user = user
        self.traffic = traffic
        self.http = httpx2.AsyncClient(base_url=base, timeout=60.0, event_hooks={"response": [traffic.hook("browser")]})
        self.answer: dict[str, str] = {}

    async def redirect_handler(self, url: str) -> None:
        first = await self.http.get(path_of(url))
        page = await self.http.get(path_of(first.headers["location"]))
        to_google = await self.http.post("/oauth/consent", data={**form_fields(page.text), "decision": "allow"})
        back = await asyncio.to_thread(at_google, to_google.headers["location"], self.user)  # in the emulator's log
        to_client = await self.http.get(path_of(back))
        if to_client.status_code != 302:
            raise RuntimeError(f"the sign-in of {self.user} ended with {to_client.status_code}: {to_client.text[:300]}")
        self.answer = query_of(to_client.headers["location"])

    async def callback_handler(self) -> AuthorizationCodeResult:
        if "code" not in self.answer:
            raise RuntimeError(f"no code for {self.user}: {self.answer}")
        answer = self.answer
        return AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))


def oauth_opener(url: str, user: str, mode: str, traffic: Traffic, storage: Memory) -> Callable[[], Any]:
    """A client of `url` that signs `user` in on first use; it registers itself (RFC 7591) unless `storage` holds
    a registration already (one app for many people, as claude.ai is)."""
    browser = Browser(url.removesuffix("/mcp"), user, traffic)
    auth = OAuthClientProvider(
        url,
        public_client("remote sign-in bench"),
        storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )

    def opener() -> Any:
        http = httpx2.AsyncClient(
            auth=auth, timeout=httpx2.Timeout(60.0), event_hooks={"response": [traffic.hook("app")]}
        )
        return Client(streamable_http_client(url, http_client=http), mode=mode)

    return opener


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def oauth_env(emulator: EmulatorProcess, scratch: Path, port: int) -> dict[str, str]:
    """The server's environment for `--auth oauth` on `port`: the emulator's Web client with this callback."""
    from cryptography.fernet import Fernet

    callback = f"http://127.0.0.1:{port}/oauth/google/callback"
    emulator.post("oauth/redirect-uris", {"uri": callback})
    client = json.loads(client_file_path(scratch).read_text(encoding="utf-8"))
    client["web"]["redirect_uris"] = [callback]
    client_file = scratch / "web-client-oauth.json"
    client_file.write_text(json.dumps(client), encoding="utf-8")
    return {
        **server_env(emulator),
        "GMAIL_MCP_PUBLIC_URL": f"http://127.0.0.1:{port}/mcp",
        "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(client_file),
        "GMAIL_MCP_ALLOWED_USERS": "@example.com",
        "GMAIL_MCP_STATE_DIR": str(scratch / "remote-state"),
        "GMAIL_MCP_TOKEN_KEY": Fernet.generate_key().decode("ascii"),
        # Every sign-in starts with a request without a token (401, the discovery step), which the server counts
        # as a failed authentication of the client's address: 20 people signing in from one address within a
        # minute would meet the limit of 10 (429) before the load starts.
        "GMAIL_MCP_HTTP_AUTH_FAILURES": "1000",
    }


def emulator_shape(entries: Sequence[dict[str, Any]]) -> str:
    """What the emulator served, by kind: Google's consent page, its token endpoint, its keys, then Gmail."""
    names = {"/o/oauth2/v2/auth": "google consent", "/token": "google token", "/oauth2/v3/certs": "google keys"}
    google = [names[entry["path"]] for entry in entries if entry["path"] in names]
    gmail = [entry for entry in entries if entry["path"] not in names]
    counted = Counter(google)
    parts = [f"{number} x {name}" if number > 1 else name for name, number in counted.items()]
    return " + ".join([*parts, describe_requests(gmail)] if gmail else parts) or "-"


@dataclass
class SignIn:
    wall_ms: float
    app_requests: int
    browser_requests: int
    emulator_entries: list[dict[str, Any]]

    @property
    def trips(self) -> int:
        return round_trips(self.emulator_entries)


async def first_result(url: str, emulator: EmulatorProcess, user: str, mode: str, storage: Memory) -> SignIn:
    """One person's sign-in, from the client's first request to the answer of its first search."""
    traffic = Traffic()
    since = emulator.last_seq()
    started = time.perf_counter()
    async with oauth_opener(url, user, mode, traffic, storage)() as session:
        found = await session.call_tool(SEARCH, {"query": "in:inbox", "max_results": 10})
    wall_ms = (time.perf_counter() - started) * 1000
    if found.is_error:
        raise RuntimeError(f"the first search of {user} failed: {found.content[0].text}")
    return SignIn(wall_ms, traffic.count("app"), traffic.count("browser"), emulator.requests(since))


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


def report(sign_in: SignIn, static: Outcome, oauth: Outcome, args: argparse.Namespace) -> bool:
    ideal_ms = sign_in.trips * args.rtt_ms
    print(
        f"\nEmulated Google and Gmail RTT {args.rtt_ms:g} ms, mode {args.mode}; one server process per run.\n\n"
        f"sign-in to first tool result (a new person: dynamic registration, consent, Google, code, token, "
        f"initialize, search max 10)\n"
        f"  requests to this server   {sign_in.app_requests} by the client, {sign_in.browser_requests} by the browser\n"
        f"  requests to the emulator  {len(sign_in.emulator_entries)}: {emulator_shape(sign_in.emulator_entries)}\n"
        f"  emulator round trips      {sign_in.trips} (ideal {ideal_ms:.0f} ms)\n"
        f"  wall                      {sign_in.wall_ms:.0f} ms ({sign_in.wall_ms / max(ideal_ms, 1):.2f} x ideal)\n"
    )
    print(f"{'throughput':<16}{'people x calls':<17}{'calls':>6}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'errors':>8}")
    print("-" * 73)
    print(throughput_line(static))
    print(throughput_line(oauth))
    ratio = oauth.per_second / max(static.per_second, 1e-9)
    failures = [f"{outcome.transport}: {error}" for outcome in (static, oauth) for error in outcome.errors[:3]]
    checks = [
        (f"all {static.calls + oauth.calls} calls succeeded", not failures),
        (
            f"sign-in: {sign_in.trips} emulator round trips to the first result (target <= {SIGN_IN_TRIPS_TARGET})",
            sign_in.trips <= SIGN_IN_TRIPS_TARGET,
        ),
        (
            f"throughput: OAuth req/s / static bearer req/s = {ratio:.2f} (target >= {THROUGHPUT_RATIO_TARGET})",
            ratio >= THROUGHPUT_RATIO_TARGET,
        ),
    ]
    return print_checks(checks, failures)


async def run(args: argparse.Namespace) -> bool:
    load = Load("throughput", args.people, args.concurrency, args.rounds)
    with tempfile.TemporaryDirectory(prefix="gmail-remote-bench-") as scratch_dir:
        scratch = Path(scratch_dir)
        with people_emulator(args.people + 1, args.rtt_ms, scratch) as emulator:
            env, tokens = static_env(emulator, scratch, args.people)
            with http_server(env) as server:
                openers = [
                    (lambda token=token: mcp_client(server.url, args.mode, {"Authorization": f"Bearer {token}"}))
                    for token in tokens
                ]
                static = await throughput("static bearer", openers, load)
            port = free_port()
            with http_server(oauth_env(emulator, scratch, port), f"127.0.0.1:{port}", ["--auth", "oauth"]) as server:
                url = f"http://127.0.0.1:{port}/mcp"
                app = Memory()  # registered by the first sign-in, then shared: one app, many people
                sign_in = await first_result(url, emulator, person(args.people), args.mode, app)
                traffic = Traffic()
                openers = [
                    oauth_opener(url, person(number), args.mode, traffic, Memory(app.client))
                    for number in range(args.people)
                ]
                oauth = await throughput("OAuth", openers, load)
    return report(sign_in, static, oauth, args)


def main(argv: list[str] | None = None) -> int:
    parser = load_parser("remote_signin", __doc__, rounds=4)
    parser.add_argument("--people", type=int, default=20, help="people signed in at once (default 20)")
    parser.add_argument("--concurrency", type=int, default=2, help="calls each person's client sends at once")
    args = parser.parse_args(argv)
    return 0 if asyncio.run(run(args)) else 1


if __name__ == "__main__":
    sys.exit(main())
