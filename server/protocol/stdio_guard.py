"""Answers malformed stdin lines with JSON-RPC errors instead of dropping them in silence.

The SDK's stdio transport turns a line it cannot parse into an `Exception` item on the read stream, and the
dispatcher discards it at debug level: a client that sent truncated JSON waits forever for an answer, and no
log says why. JSON-RPC 2.0 (section 5.1) asks for `-32700 Parse error` when the text is not JSON and
`-32600 Invalid Request` when it is JSON but not a request, notification or response, both with `id: null`
(the id of a message that could not be read is unknown). This relay sits between the transport and the server:
valid messages pass through untouched, malformed ones are answered here. Blank lines carry nothing and get
nothing. The offending text is never echoed or logged: it may hold anything the client had in hand.

`stdio_channel()` is the server's stdio: the SDK's own transport (`mcp.server.stdio.stdio_server`), with this
relay in front of it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError

from server.runtime.observability import get_logger

log = get_logger("stdio")


def error_for_malformed(exc: Exception) -> types.JSONRPCError | None:
    """The JSON-RPC error answering one unreadable line, or None for a blank line (nothing to answer)."""
    problems = exc.errors(include_url=False) if isinstance(exc, ValidationError) else []
    if problems and problems[0]["type"] == "json_invalid":
        line = problems[0].get("input")
        if isinstance(line, str) and not line.strip():
            return None
        error = types.ErrorData(code=PARSE_ERROR, message="Parse error: the line is not valid JSON.")
    else:
        error = types.ErrorData(
            code=INVALID_REQUEST,
            message="Invalid Request: not a JSON-RPC 2.0 request, notification or response object.",
        )
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)


@asynccontextmanager
async def answer_malformed_lines(read_stream: Any, write_stream: Any) -> AsyncIterator[Any]:
    """Yields the read stream the server should use; errors for malformed lines go straight to `write_stream`."""
    relay_send, relay_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def relay() -> None:
        async with relay_send:
            async for item in read_stream:
                if not isinstance(item, Exception):
                    await relay_send.send(item)
                    continue
                answer = error_for_malformed(item)
                if answer is None:
                    continue
                log.warning("malformed JSON-RPC line on stdin", extra={"jsonrpc_error": answer.error.code})
                # The server closes the write stream when it stops; a late answer is then moot.
                with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await write_stream.send(SessionMessage(answer))

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(relay)
        try:
            yield relay_receive
        finally:
            task_group.cancel_scope.cancel()


@asynccontextmanager
async def stdio_channel() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for `Server.run` over this process's stdin and stdout."""
    async with (
        stdio_server() as (read_stream, write_stream),
        answer_malformed_lines(read_stream, write_stream) as messages,
    ):
        yield messages, write_stream
