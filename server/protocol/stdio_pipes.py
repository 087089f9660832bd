"""stdio without thread hops: the MCP channel read and written by the event loop itself, where stdin and stdout
are pipes or sockets (how every desktop client starts a server).

The SDK's `stdio_server()` reads each line and writes each answer through a worker thread (`anyio.wrap_file`):
two thread round trips per request, about a third of the server's CPU for a `ping` and 0.5 ms of every tool
call. Here the event loop watches the pipes (`connect_read_pipe` / `connect_write_pipe`): a line is parsed in
the callback that reads it, an answer goes out in the `send` that writes it, and reading pauses while `HIGH_WATER`
messages wait, as the SDK's rendezvous stream would. Malformed lines are answered here too, with the JSON-RPC
errors `stdio_guard.error_for_malformed` chooses.

Like the SDK, while serving fd 0 reads the null device and fd 1 writes to stderr, so anything else that writes
to stdout (a library's print, a child process) cannot corrupt the channel; both are restored on exit. Anything
else (Windows, a terminal, a file, stdout sharing stderr's pipe, whose blocking mode must not change) is served
by the SDK's transport, with `stdio_guard` in front of it.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from server.protocol.stdio_guard import answer_malformed_lines, error_for_malformed
from server.runtime.observability import get_logger

log = get_logger("stdio")

HIGH_WATER = 16  # parsed messages waiting for the server before reading pauses
LOW_WATER = 4
FLUSH_TIMEOUT_S = 2.0  # at exit, how long answers still buffered may take to reach a slow reader


def lean_pipes_usable() -> bool:
    """True where the event loop can watch stdin and stdout directly (POSIX pipes or sockets, stdout not shared
    with stderr: a non-blocking stdout would make stderr non-blocking too)."""
    if os.name != "posix":
        return False
    try:
        ins, outs, errs = (os.fstat(fd) for fd in (0, 1, 2))
    except OSError:
        return False
    piped = all(stat.S_ISFIFO(s.st_mode) or stat.S_ISSOCK(s.st_mode) for s in (ins, outs))
    return piped and (outs.st_dev, outs.st_ino) != (errs.st_dev, errs.st_ino)


@asynccontextmanager
async def stdio_channel() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for `Server.run` over this process's stdin and stdout."""
    if not lean_pipes_usable():
        from mcp.server.stdio import stdio_server

        async with (
            stdio_server() as (read_stream, write_stream),
            answer_malformed_lines(read_stream, write_stream) as messages,
        ):
            yield messages, write_stream
        return
    async with pipe_channel() as streams:
        yield streams


@asynccontextmanager
async def pipe_channel(stdin_fd: int = 0, stdout_fd: int = 1) -> AsyncIterator[tuple[Inbox, Outbox]]:
    """The lean channel over two pipe descriptors, diverted while it serves (see the module docstring)."""
    loop = asyncio.get_running_loop()
    wire_in, wire_out = _claim(stdin_fd, os.devnull, os.O_RDONLY), _claim(stdout_fd, None, os.O_WRONLY)
    write_transport = read_transport = None
    try:
        write_transport, flow = await loop.connect_write_pipe(_Flow, os.fdopen(wire_out, "wb", buffering=0))
        outbox = Outbox(write_transport, flow)
        inbox = Inbox()
        read_transport, _ = await loop.connect_read_pipe(
            lambda: _LineReader(inbox, outbox), os.fdopen(wire_in, "rb", buffering=0)
        )
        inbox.attach(read_transport)
        yield inbox, outbox
        await outbox.flush(FLUSH_TIMEOUT_S)
    finally:
        # The descriptors go back to the wire before the transports close their duplicates (in blocking mode, as
        # the next user of the wire expects).
        for wire, fd in ((wire_in, stdin_fd), (wire_out, stdout_fd)):
            with suppress(OSError):
                os.set_blocking(wire, True)
                os.dup2(wire, fd)
        for transport in (read_transport, write_transport):
            if transport is not None:
                transport.abort() if transport is write_transport else transport.close()
        if read_transport is None:
            with suppress(OSError):
                os.close(wire_in)
        if write_transport is None:
            with suppress(OSError):
                os.close(wire_out)


def _claim(fd: int, diversion: str | None, mode: int) -> int:
    """A private duplicate of `fd` for the channel; `fd` itself now points at `diversion` (None: stderr)."""
    wire = os.dup(fd)  # not inheritable (PEP 446), and above 2: fds 0-2 are open (lean_pipes_usable)
    if diversion is None:
        os.dup2(2, fd)
    else:
        target = os.open(diversion, mode)
        os.dup2(target, fd)
        os.close(target)
    return wire


class Inbox:
    """The read stream `Server.run` consumes: messages in arrival order, end of stream at EOF."""

    def __init__(self) -> None:
        self._items: deque[SessionMessage | Exception] = deque()
        self._ready = asyncio.Event()
        self._ended = False
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False

    def attach(self, transport: asyncio.ReadTransport) -> None:
        self._transport = transport

    def put(self, item: SessionMessage) -> None:
        self._items.append(item)
        self._ready.set()
        if len(self._items) >= HIGH_WATER and self._transport is not None and not self._paused:
            self._paused = True
            self._transport.pause_reading()

    def end(self) -> None:
        self._ended = True
        self._ready.set()

    async def receive(self) -> SessionMessage | Exception:
        while not self._items:
            if self._ended:
                raise anyio.EndOfStream
            self._ready.clear()
            await self._ready.wait()
        item = self._items.popleft()
        if self._paused and len(self._items) <= LOW_WATER and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return item

    async def aclose(self) -> None:
        self.end()
        self._items.clear()
        if self._transport is not None:
            self._transport.close()

    def __aiter__(self) -> Inbox:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Inbox:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()


class _Flow(asyncio.Protocol):
    """Write-side flow control: `send` waits while the pipe's buffer is over asyncio's high-water mark."""

    def __init__(self) -> None:
        self.writable = asyncio.Event()
        self.writable.set()
        self.lost = False

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.writable.set()


class Outbox:
    """The write stream `Server.run` sends to: one JSON line per message, written without a thread."""

    def __init__(self, transport: asyncio.WriteTransport, flow: _Flow) -> None:
        self._transport = transport
        self._flow = flow
        self._closed = False

    def write_now(self, message: types.JSONRPCMessage) -> None:
        if self._closed or self._flow.lost or self._transport.is_closing():
            raise anyio.BrokenResourceError
        self._transport.write(message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")

    async def send(self, item: SessionMessage) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        self.write_now(item.message)
        if not self._flow.writable.is_set():
            await self._flow.writable.wait()

    async def flush(self, timeout: float) -> None:
        """Waits (at most `timeout` s) until the answers already written have left the buffer."""
        with anyio.move_on_after(timeout):
            while self._transport.get_write_buffer_size() and not self._flow.lost:
                await anyio.sleep(0.01)

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> Outbox:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()


class _LineReader(asyncio.Protocol):
    """Splits stdin into lines (as the SDK's text reader does: \\n, \\r\\n or \\r, invalid UTF-8 replaced) and
    parses each one; a malformed line is answered at once, a blank one ignored."""

    def __init__(self, inbox: Inbox, outbox: Outbox, parse: Callable[[str], Any] | None = None) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._parse = parse or (lambda text: types.jsonrpc_message_adapter.validate_json(text, by_name=False))
        self._partial = bytearray()

    def data_received(self, data: bytes) -> None:
        # Only the new bytes are searched for an end of line: a 10 MB line costs one pass, not one per chunk.
        last = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if last < 0:
            self._partial += data
            return
        complete = bytes(self._partial) + data[: last + 1] if self._partial else data[: last + 1]
        self._partial = bytearray(data[last + 1 :])
        for line in complete.splitlines():
            self._line(line)

    def eof_received(self) -> bool:
        if self._partial:
            self._line(bytes(self._partial))  # a last line without its newline still counts
            self._partial.clear()
        self._inbox.end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._inbox.end()

    def _line(self, raw: bytes) -> None:
        if not raw.strip():
            return
        try:
            message = self._parse(raw.decode("utf-8", "replace"))
        except Exception as exc:
            self._answer_malformed(exc)
            return
        self._inbox.put(SessionMessage(message))

    def _answer_malformed(self, exc: Exception) -> None:
        answer = error_for_malformed(exc)
        if answer is None:
            return
        log.warning("malformed JSON-RPC line on stdin", extra={"jsonrpc_error": answer.error.code})
        with suppress(anyio.BrokenResourceError):
            self._outbox.write_now(answer)
