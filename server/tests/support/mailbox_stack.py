"""A mailbox that changes during a test, and the real server over it, as `python -m server.main` builds it.

`changing_mailbox()` starts an emulator of its own on the demo mailbox (changes must not leak into other
suites) and an `AccountRegistry` pointed at it (the account's client, caches, warm-up), served in-process to a
real MCP client session. `Stack.call` returns a tool's result together with the requests the emulator logged
during the call, so tests pin request counts and shapes without timing anything.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client

from server.app.accounts import AccountRegistry
from server.emulator import Emulator, start_emulator
from server.protocol.dispatch import build_server
from server.runtime.config import load_settings
from server.runtime.cost import COST_META_KEY
from server.runtime.observability import Metrics

SEARCH, GET, CHANGES = "gmail_search_messages", "gmail_get_message", "gmail_changes_since"
HISTORY_PATH, PROFILE_PATH = "/gmail/v1/users/me/history", "/gmail/v1/users/me/profile"
LIST_PATH, BATCH_PATH = "/gmail/v1/users/me/messages", "/batch/gmail/v1"


@dataclass
class Stack:
    emulator: Emulator
    registry: AccountRegistry
    metrics: Metrics
    client: Client

    async def call(self, tool: str, arguments: dict[str, Any], *, ok: bool = True) -> tuple[Any, list[dict]]:
        """Calls a tool; returns its result and the requests the emulator saw during the call."""
        log = self.emulator.requests()
        since = log[-1]["seq"] if log else 0
        result = await self.client.call_tool(tool, arguments)
        if ok:
            assert result.is_error is False, result.content[0].text
        return result, self.emulator.requests(since)

    @property
    def gmail(self) -> Any:
        return self.registry.get(None).gmail


def shape(entries: list[dict]) -> list[tuple[str, int | None]]:
    """`[(path, batch parts or None), ...]`: what a call sent, in order."""
    return [(entry["path"], entry["batch_parts"]) for entry in entries]


def cost_of(result: Any) -> dict[str, int]:
    return result.meta[COST_META_KEY]


def ids_of(result: Any) -> list[str]:
    return [item["id"] for item in result.structured_content["messages"]]


@contextlib.asynccontextmanager
async def changing_mailbox(
    tmp_path: Path, *, mode: str = "legacy", warm: bool = True, mailbox: Path | None = None, **env: str
) -> AsyncIterator[Stack]:
    """An emulator of its own and the real server (registry, caches, warm-up) in an MCP session over it.

    With `warm`, waits for the session's warm-up (token, profile) and clears the request log, so the first
    measured call starts from a warm server.
    """
    from server.demo import DEMO_MAILBOX

    with start_emulator(mailbox or DEMO_MAILBOX, rebase_dates=True) as emulator:
        token = emulator.write_token(tmp_path / "token.json")
        settings = load_settings(
            env={
                "GMAIL_API_ENDPOINT": emulator.url,
                "GMAIL_TOKEN_URI": emulator.token_uri,
                "GMAIL_TOKEN_PATH": str(token),
                "GMAIL_MCP_QUOTA_UNITS_PER_S": "0",
                **env,
            },
            dotenv=False,
        )
        metrics = Metrics()
        registry = AccountRegistry.single(settings, metrics=metrics)
        async with Client(build_server(registry), mode=mode) as client:
            if warm and settings.warm_up:
                await client.list_tools()  # what a client does first; starts the warm-up in either era
                assert await anyio.to_thread.run_sync(registry.warmed_up.wait, 30), "the warm-up did not finish"
                emulator.reset()
            yield Stack(emulator, registry, metrics, client)
