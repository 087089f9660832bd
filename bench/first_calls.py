"""The first tool call of a session, as a client makes it: a new server, `initialize`, `tools/list`, a pause, a search.

A desktop client starts the server when a conversation opens and asks its first question about a second after
listing the tools; `gap_s` stands for that pause. The token file decides what the first call must do besides the
search: `valid` holds an access token with an hour to live (a server restarted within the hour), `expired` holds
one that expired (the next morning), so a token request is due.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.harness import ROOT, EmulatorProcess, describe_requests, round_trips, server_env

SEARCH = "gmail_search_messages"
SEARCH_ARGS = {"query": "in:inbox", "max_results": 10}


def token_file(emulator: EmulatorProcess, path: Path, *, state: str) -> Path:
    """A copy of the emulator's token file holding an access token that is `valid` (1 h left) or `expired`."""
    info = json.loads(emulator.token_path.read_text(encoding="utf-8"))
    if state == "valid":
        form = urllib.parse.urlencode(
            {
                "grant_type": "refresh_token",
                "client_id": info["client_id"],
                "client_secret": info["client_secret"],
                "refresh_token": info["refresh_token"],
            }
        ).encode()
        with urllib.request.urlopen(emulator.token_uri, data=form, timeout=10) as response:
            granted = json.loads(response.read())
        info["token"] = granted["access_token"]
        expiry = datetime.now(timezone.utc) + timedelta(seconds=int(granted["expires_in"]))
    else:
        info["token"] = "ya29.expired-access-token"
        expiry = datetime.now(timezone.utc) - timedelta(hours=12)
    info["expiry"] = expiry.replace(tzinfo=None).isoformat()  # google-auth reads naive UTC
    path.write_text(json.dumps(info), encoding="utf-8")
    path.chmod(0o600)
    return path


@dataclass
class FirstCall:
    """One session's first search, and the warm searches after it in the same session."""

    first_ms: float
    first_entries: list[dict[str, Any]]
    session_entries: list[dict[str, Any]]  # everything the session sent up to the end of the first call
    warm_ms: list[float] = field(default_factory=list)

    @property
    def first_shape(self) -> str:
        return describe_requests(self.first_entries)

    @property
    def token_requests(self) -> int:
        return sum(1 for entry in self.session_entries if entry["path"] == "/token")

    @property
    def first_trips(self) -> int:
        return round_trips(self.first_entries)


async def first_call(
    emulator: EmulatorProcess,
    scratch: Path,
    *,
    state: str,
    gap_s: float,
    mode: str = "legacy",
    warm_runs: int = 0,
    extra_env: dict[str, str] | None = None,
) -> FirstCall:
    token = token_file(emulator, scratch / f"token-{state}-{time.monotonic_ns()}.json", state=state)
    env = {**server_env(emulator), "GMAIL_TOKEN_PATH": str(token), **(extra_env or {})}
    params = StdioServerParameters(command=sys.executable, args=["-m", "server.main"], env=env, cwd=str(ROOT))
    session_start = emulator.last_seq()
    with open(scratch / "first-calls.log", "a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:  # type: ignore[arg-type]
            await client.list_tools()
            await asyncio.sleep(gap_s)
            since = emulator.last_seq()
            started = time.perf_counter()
            result = await client.call_tool(SEARCH, SEARCH_ARGS)
            first_ms = (time.perf_counter() - started) * 1000
            if result.is_error:
                raise RuntimeError(f"first search failed: {result.content[0].text}")
            outcome = FirstCall(first_ms, emulator.requests(since), emulator.requests(session_start))
            token = result.structured_content.get("next_page_token")
            for _ in range(warm_runs):
                # The next page each time: new messages, so neither cache answers; a warm search of 10 results.
                started = time.perf_counter()
                page = await client.call_tool(SEARCH, {**SEARCH_ARGS, "page_token": token})
                outcome.warm_ms.append((time.perf_counter() - started) * 1000)
                token = page.structured_content.get("next_page_token")
                if not token:
                    break
    return outcome


async def first_calls(
    emulator: EmulatorProcess, scratch: Path, *, state: str, gap_s: float, sessions: int, mode: str = "legacy"
) -> list[FirstCall]:
    return [
        await first_call(emulator, scratch, state=state, gap_s=gap_s, mode=mode, warm_runs=5) for _ in range(sessions)
    ]


def summary(calls: list[FirstCall]) -> str:
    first = statistics.median(call.first_ms for call in calls)
    warm = statistics.median(ms for call in calls for ms in call.warm_ms)
    return (
        f"first {first:.1f} ms ({calls[0].first_shape}, {calls[0].first_trips} RT, session token requests "
        f"{calls[0].token_requests}), warm {warm:.1f} ms, ratio {first / warm:.2f}"
    )


if __name__ == "__main__":  # today's figures, quickly: python -m bench.first_calls [RTT_MS]
    import tempfile

    from bench.harness import emulator_process

    async def _main() -> None:
        rtt = float(sys.argv[1]) if len(sys.argv) > 1 else 100.0
        with tempfile.TemporaryDirectory() as scratch_dir, emulator_process(rtt, Path(scratch_dir)) as emulator:
            for state in ("valid", "expired"):
                for gap in (1.0, 0.0):
                    calls = await first_calls(emulator, Path(scratch_dir), state=state, gap_s=gap, sessions=3)
                    print(f"{state:8} gap {gap:.0f} s: {summary(calls)}")

    asyncio.run(_main())
