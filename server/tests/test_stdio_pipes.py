"""The lean stdio channel (`server/protocol/stdio_pipes.py`) over real pipes, and the fallback to the SDK's
transport where stdin is not a pipe.

In-process tests give `pipe_channel` the ends of `os.pipe()` pairs in place of fds 0 and 1 and play the client on
the other ends: framing (\\n, \\r\\n, \\r, a last line without its newline, lines split across reads), invalid
UTF-8, blank and malformed lines, back-pressure, the diversion of the descriptors while serving and their return.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from server.protocol import stdio_pipes
from server.protocol.stdio_pipes import lean_pipes_usable, pipe_channel
from server.tests.support.platforms import WINDOWS
from server.tests.support.raw_jsonrpc import INITIALIZED, initialize, line

pytestmark = [
    pytest.mark.slow,  # server subprocesses: the slow tier (`pytest -m slow`)
    pytest.mark.skipif(WINDOWS, reason="the lean channel is POSIX-only; Windows uses the SDK's transport"),
]

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture
def anyio_backend():
    return "asyncio"  # the channel is asyncio's pipe transports (anyio runs the server on asyncio)


class Wire:
    """The client's ends: what it writes becomes the channel's stdin, what the channel answers is read here."""

    def __init__(self) -> None:
        self.stdin_fd, self.to_server = os.pipe()
        self.from_server, self.stdout_fd = os.pipe()

    def send(self, data: bytes) -> None:
        os.write(self.to_server, data)

    def close_input(self) -> None:
        os.close(self.to_server)

    def answers(self) -> list[dict]:
        os.set_blocking(self.from_server, False)
        chunks = []
        while True:
            try:
                chunk = os.read(self.from_server, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return [json.loads(text) for text in b"".join(chunks).decode().splitlines()]

    def close(self) -> None:
        for fd in (self.stdin_fd, self.stdout_fd, self.from_server):
            os.close(fd)


@pytest.fixture
def wire():
    pair = Wire()
    yield pair
    pair.close()


async def received(wire: Wire, data: bytes, *, eof: bool = True) -> list[SessionMessage | Exception]:
    """What the server would read from `data` (then EOF when `eof`)."""
    items = []
    async with pipe_channel(wire.stdin_fd, wire.stdout_fd) as (inbox, _outbox):
        wire.send(data)
        if eof:
            wire.close_input()
        with anyio.fail_after(5):
            async for item in inbox:
                items.append(item)
                if not eof and len(items) == data.count(b'"method"'):
                    break
    return items


def methods(items: list) -> list[str]:
    return [item.message.method for item in items]


@pytest.mark.anyio
@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
async def test_each_line_ending_the_sdk_reads_is_a_message(wire, end):
    data = line(PING, end) + line({"jsonrpc": "2.0", "method": "notifications/initialized"}, end)
    assert methods(await received(wire, data)) == ["ping", "notifications/initialized"]


@pytest.mark.anyio
async def test_a_last_line_without_its_newline_still_counts_at_eof(wire):
    assert methods(await received(wire, line(PING, b""))) == ["ping"]


@pytest.mark.anyio
async def test_lines_split_across_reads_and_many_lines_in_one_read(wire):
    data = b"".join(line({**PING, "id": n}) for n in range(50))
    items = []
    async with pipe_channel(wire.stdin_fd, wire.stdout_fd) as (inbox, _):
        for start in range(0, len(data), 7):  # 7-byte writes: every line arrives in pieces
            wire.send(data[start : start + 7])
        wire.close_input()
        with anyio.fail_after(5):
            items = [item async for item in inbox]
    assert [item.message.id for item in items] == list(range(50))


@pytest.mark.anyio
async def test_blank_lines_get_nothing_and_malformed_ones_get_json_rpc_errors(wire):
    data = b"   \n" + b"not json\n" + b"[1, 2]\n" + b"\xff\xfe garbage\n" + line(PING)
    items = await received(wire, data)
    assert methods(items) == ["ping"]  # the server sees only the valid message
    codes = [answer["error"]["code"] for answer in wire.answers()]
    assert codes == [-32700, -32600, -32700]
    assert all(answer["id"] is None for answer in wire.answers() or [])


@pytest.mark.anyio
async def test_invalid_utf8_inside_a_string_is_replaced_as_the_sdk_does(wire):
    raw = b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x\xff"}}\n'
    (item,) = await received(wire, raw)
    assert item.message.params["name"] == "x\ufffd"


@pytest.mark.anyio
async def test_answers_are_one_json_line_each_as_the_sdk_writes_them(wire):
    answer = types.JSONRPCResponse(jsonrpc="2.0", id=5, result={"ok": True})
    async with pipe_channel(wire.stdin_fd, wire.stdout_fd) as (_, outbox):
        await outbox.send(SessionMessage(answer))
        await outbox.send(SessionMessage(answer))
    raw = os.read(wire.from_server, 1 << 16)
    expected = answer.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
    assert raw == expected * 2


@pytest.mark.anyio
async def test_reading_pauses_while_the_server_lags_and_resumes_when_it_catches_up(wire):
    count = stdio_pipes.HIGH_WATER * 4
    async with pipe_channel(wire.stdin_fd, wire.stdout_fd) as (inbox, _):
        wire.send(b"".join(line({**PING, "id": n}) for n in range(count)))
        with anyio.fail_after(5):  # the loop reads what it may; nothing consumes yet, so it pauses
            while not inbox.paused:
                await anyio.sleep(0.005)
        assert len(inbox._items) <= count
        with anyio.fail_after(5):
            ids = [(await inbox.receive()).message.id for _ in range(count)]
        assert not inbox.paused
    assert ids == list(range(count))


@pytest.mark.anyio
async def test_the_descriptors_are_diverted_while_serving_and_restored_after(wire):
    stdin_before, stdout_before = os.fstat(wire.stdin_fd), os.fstat(wire.stdout_fd)
    async with pipe_channel(wire.stdin_fd, wire.stdout_fd) as (_, outbox):
        assert os.fstat(wire.stdout_fd).st_ino == os.fstat(2).st_ino  # a stray write lands on stderr
        assert os.read(wire.stdin_fd, 10) == b""  # a stray read sees the null device
        await outbox.send(SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=1, result={})))
    assert os.fstat(wire.stdin_fd).st_ino == stdin_before.st_ino
    assert os.fstat(wire.stdout_fd).st_ino == stdout_before.st_ino
    assert os.get_blocking(wire.stdin_fd) and os.get_blocking(wire.stdout_fd)
    assert [answer["id"] for answer in wire.answers()] == [1]


@pytest.mark.anyio
async def test_descriptors_come_back_even_after_eof_closed_the_transports_and_the_numbers_were_reused(wire):
    stdin_before = os.fstat(wire.stdin_fd).st_ino
    async with pipe_channel(wire.stdin_fd, wire.stdout_fd) as (inbox, _):
        wire.close_input()
        with anyio.fail_after(5):
            assert [item async for item in inbox] == []
        await anyio.sleep(0.05)  # asyncio has closed the read transport's descriptor by now
        opened = [os.open(os.devnull, os.O_RDONLY) for _ in range(4)]  # a handler reusing freed numbers
    try:
        assert os.fstat(wire.stdin_fd).st_ino == stdin_before
        assert not any(os.path.sameopenfile(wire.stdin_fd, fd) for fd in opened)
        assert os.get_blocking(wire.stdin_fd)
    finally:
        for fd in opened:
            os.close(fd)


@pytest.mark.anyio
async def test_a_client_that_writes_junk_and_never_reads_stops_being_read(wire):
    """Answers to malformed lines pile up in the pipe; once it is full, reading pauses instead of buffering."""
    junk = b"not json\n" * 20_000
    async with pipe_channel(wire.stdin_fd, wire.stdout_fd) as (inbox, outbox):
        os.set_blocking(wire.to_server, False)
        sent = 0
        with anyio.move_on_after(3):
            while sent < 10 * len(junk):
                try:
                    sent += os.write(wire.to_server, junk)
                except BlockingIOError:  # the server stopped reading: our pipe to it is full
                    await anyio.sleep(0.2)
                    try:
                        sent += os.write(wire.to_server, junk)
                    except BlockingIOError:
                        break
                await anyio.sleep(0)
        assert inbox.paused and not outbox._flow.writable.is_set()
        assert outbox._transport.get_write_buffer_size() < 1 << 20  # bounded by the pause, not by the client
        wire.close_input()


def test_restore_blocking_puts_open_wires_back_in_blocking_mode():
    read_end, write_end = os.pipe()
    try:
        os.set_blocking(read_end, False)
        stdio_pipes._WIRES_IN_USE.add(read_end)
        stdio_pipes.restore_blocking()
        assert os.get_blocking(read_end)
    finally:
        stdio_pipes._WIRES_IN_USE.discard(read_end)
        os.close(read_end)
        os.close(write_end)


def quiet_server_env(tmp_path) -> dict[str, str]:
    return {**os.environ, "GMAIL_TOKEN_PATH": str(tmp_path / "missing.json"), "GMAIL_MCP_WARM_UP": "0"}


def test_a_client_that_quits_closing_both_pipes_leaves_a_clean_exit(tmp_path):
    for close_stdout_first in (True, False):
        server = subprocess.Popen(
            [sys.executable, "-m", "server.main"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=quiet_server_env(tmp_path),
        )
        server.stdin.write(line(initialize()))
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        pipes = (server.stdout, server.stdin) if close_stdout_first else (server.stdin, server.stdout)
        for pipe in pipes:
            pipe.close()
        assert server.wait(20) == 0
        assert b"Traceback" not in server.stderr.read()
        server.stderr.close()


def test_one_socket_for_both_directions_is_served_by_the_sdk_transport(tmp_path):
    """As inetd, systemd's Accept=yes or socat's EXEC give a server: stdin and stdout are one socket."""
    client, child = socket.socketpair()
    server = subprocess.Popen(
        [sys.executable, "-m", "server.main"],
        stdin=child,
        stdout=child,
        stderr=subprocess.DEVNULL,
        env=quiet_server_env(tmp_path),
    )
    child.close()
    try:
        client.sendall(line(initialize()))
        client.settimeout(30)
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = client.recv(1 << 16)
            assert chunk, "the server closed the socket without answering"
            answer += chunk
        assert json.loads(answer)["id"] == 1
    finally:
        client.close()
        assert server.wait(20) == 0


def test_only_pipes_and_sockets_take_the_lean_path(tmp_path):
    probe = (
        "import sys; from server.protocol.stdio_pipes import lean_pipes_usable; "
        "sys.stderr.write(str(lean_pipes_usable()))"
    )

    def usable(**streams) -> str:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=False, timeout=30, **streams)
        assert done.returncode == 0
        return (tmp_path / "err").read_text()

    with open(tmp_path / "err", "w") as err:
        assert usable(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err) == "True"
    with open(tmp_path / "err", "w") as err, open(tmp_path / "in", "w+") as regular_file:
        assert usable(stdin=regular_file, stdout=subprocess.PIPE, stderr=err) == "False"
    read_end, write_end = os.pipe()
    try:  # stdout and stderr on one pipe: a non-blocking stdout would make stderr non-blocking too
        with open(tmp_path / "err", "w") as err:
            probe_shared = probe.replace("sys.stderr.write(", "open(" + repr(str(tmp_path / "err")) + ", 'w').write(")
            subprocess.run(
                [sys.executable, "-c", probe_shared], stdin=subprocess.PIPE, stdout=write_end, stderr=write_end
            )
        assert (tmp_path / "err").read_text() == "False"
    finally:
        os.close(read_end)
        os.close(write_end)
    assert lean_pipes_usable() in (True, False)


def test_a_server_whose_stdin_is_a_file_is_served_by_the_sdk_transport(tmp_path):
    """The fallback path end to end: requests from a regular file, answers on a pipe, then EOF ends it."""
    requests = tmp_path / "requests.jsonl"
    lines = [initialize(), INITIALIZED, {**PING, "id": 2}]
    requests.write_bytes(b"".join(line(message) for message in lines) + b"garbage\n")
    env = {**os.environ, "GMAIL_TOKEN_PATH": str(tmp_path / "missing.json"), "GMAIL_MCP_WARM_UP": "0"}
    with open(requests, "rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "server.main"], stdin=stdin, capture_output=True, env=env, timeout=60
        )
    answers = [json.loads(text) for text in done.stdout.decode().splitlines()]
    assert done.returncode == 0
    assert [answer.get("id") for answer in answers] == [1, 2, None]
    assert answers[2]["error"]["code"] == -32700
