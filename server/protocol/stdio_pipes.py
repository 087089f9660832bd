"""stdio without thread hops: the MCP channel read and written by the event loop itself, where stdin and stdout
are pipes or sockets (how every desktop client starts a server).

The SDK's `stdio_server()` reads each line and writes each answer through a worker thread (`anyio.wrap_file`):
two thread round trips per request, about a third of the server's CPU for a `ping` and 0.5 ms of every tool
call. Here the event loop watches the pipes (`connect_read_pipe` / `connect_write_pipe`): a line is parsed in
the callback that reads it, an answer goes out in the `send` that writes it, and reading pauses while `HIGH_WATER`
messages wait (as the SDK's rendezvous stream would) or while answers cannot be written. Malformed lines are
answered here too, with the JSON-RPC errors `stdio_guard.error_for_malformed` chooses.

Like the SDK, while serving fd 0 reads the null device and fd 1 writes to stderr, so anything else that writes
to stdout (a library's print, a child process) cannot corrupt the channel; both are restored on exit. Anything
else (Windows, a terminal, a file, one socket for both directions, stdin or stdout shared with stderr, whose
blocking mode must not change) is served by the SDK's transport, with `stdio_guard` in front of it.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections import deque
from collections.abc import AsyncIterator
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
    """True where the event loop can watch stdin and stdout directly: POSIX pipes or sockets, each its own (a
    socket serving as both, as inetd or socat's EXEC give, reads as "closed" to asyncio's write side), and
    neither shared with stderr (non-blocking mode is a property of the shared file, so stderr would turn
    non-blocking too)."""
    if os.name != "posix":
        return False
    try:
        ins, outs, errs = (os.fstat(fd) for fd in (0, 1, 2))
    except OSError:
        return False
    piped = all(stat.S_ISFIFO(s.st_mode) or stat.S_ISSOCK(s.st_mode) for s in (ins, outs))
    files = [(s.st_dev, s.st_ino) for s in (ins, outs, errs)]
    return piped and len(set(files)) == 3


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


# The wire descriptors of open channels: `restore_blocking` (called by `main.exit_now`) puts them back in blocking
# mode when the process ends without unwinding the channel (a forced exit after SIGTERM).
_WIRES_IN_USE: set[int] = set()


@asynccontextmanager
async def pipe_channel(stdin_fd: int = 0, stdout_fd: int = 1) -> AsyncIterator[tuple[Inbox, Outbox]]:
    """The lean channel over two pipe descriptors, diverted while it serves (see the module docstring).

    The channel keeps a duplicate of each descriptor (its "wire") and gives the transports duplicates of their
    own, which asyncio closes when the peer does: the wires stay valid until `stdin_fd`/`stdout_fd` point back
    at them, whatever happened to the transports."""
    loop = asyncio.get_running_loop()
    claimed: list[tuple[int, int]] = []  # (descriptor, its wire)
    transports: list[asyncio.BaseTransport] = []
    try:
        claimed.append((stdin_fd, _claim(stdin_fd, os.devnull, os.O_RDONLY)))
        claimed.append((stdout_fd, _claim(stdout_fd, None, os.O_WRONLY)))
        (_, wire_in), (_, wire_out) = claimed
        _WIRES_IN_USE.update((wire_in, wire_out))
        inbox = Inbox()
        write_transport, flow = await loop.connect_write_pipe(
            lambda: _Flow(inbox), os.fdopen(os.dup(wire_out), "wb", buffering=0)
        )
        transports.append(write_transport)
        outbox = Outbox(write_transport, flow)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: _LineReader(inbox, outbox), os.fdopen(os.dup(wire_in), "rb", buffering=0)
        )
        transports.append(read_transport)
        inbox.attach(read_transport)
        yield inbox, outbox
        await outbox.flush(FLUSH_TIMEOUT_S)
    finally:
        for transport in transports:
            if not transport.is_closing():  # the peer may have closed it already
                transport.abort() if isinstance(transport, asyncio.WriteTransport) else transport.close()
        for fd, wire in reversed(claimed):  # blocking again, as the wire's next user expects; then back in place
            _WIRES_IN_USE.discard(wire)
            with suppress(OSError):
                os.set_blocking(wire, True)
            with suppress(OSError):
                os.dup2(wire, fd)
            with suppress(OSError):
                os.close(wire)


def restore_blocking() -> None:
    """Blocking mode back on the wires of channels still open (the process is about to end without them)."""
    for wire in list(_WIRES_IN_USE):
        with suppress(OSError):
            os.set_blocking(wire, True)


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
    """The read stream `Server.run` consumes: messages in arrival order, end of stream at EOF.

    Reading pauses while the server lags (`HIGH_WATER` messages waiting) or while answers cannot be written
    (the client is not reading them): a client that only writes cannot make the server buffer without end."""

    def __init__(self) -> None:
        self._items: deque[SessionMessage | Exception] = deque()
        self._ready = asyncio.Event()
        self._ended = False
        self._transport: asyncio.ReadTransport | None = None
        self._holds: set[str] = set()  # why reading is paused: "backlog", "writer"

    def attach(self, transport: asyncio.ReadTransport) -> None:
        self._transport = transport
        if self._holds:
            transport.pause_reading()

    def hold(self, reason: str) -> None:
        if not self._holds and self._transport is not None and not self._transport.is_closing():
            self._transport.pause_reading()
        self._holds.add(reason)

    def release(self, reason: str) -> None:
        self._holds.discard(reason)
        if not self._holds and self._transport is not None and not self._transport.is_closing():
            self._transport.resume_reading()

    @property
    def paused(self) -> bool:
        return bool(self._holds)

    def put(self, item: SessionMessage) -> None:
        self._items.append(item)
        self._ready.set()
        if len(self._items) >= HIGH_WATER:
            self.hold("backlog")

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
        if len(self._items) <= LOW_WATER and "backlog" in self._holds:
            self.release("backlog")
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
    """Write-side flow control: `send` waits, and reading pauses, while the pipe's buffer is over asyncio's
    high-water mark."""

    def __init__(self, inbox: Inbox) -> None:
        self._inbox = inbox
        self.writable = asyncio.Event()
        self.writable.set()
        self.lost = False

    def pause_writing(self) -> None:
        self.writable.clear()
        self._inbox.hold("writer")

    def resume_writing(self) -> None:
        self.writable.set()
        self._inbox.release("writer")

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.writable.set()
        self._inbox.release("writer")


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

    def __init__(self, inbox: Inbox, outbox: Outbox) -> None:
        self._inbox = inbox
        self._outbox = outbox
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
            message = types.jsonrpc_message_adapter.validate_json(raw.decode("utf-8", "replace"), by_name=False)
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
