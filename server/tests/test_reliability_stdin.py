"""The stdio channel under abuse and at shutdown, on a real `python -m server.main` subprocess fed raw lines.

Garbage on stdin gets the JSON-RPC errors the protocol asks for (-32700 parse error, -32600 invalid request,
with id null) and later valid requests are still served; EOF and SIGTERM end the process with status 0 within
2 s, even while a Gmail request hangs; stdout never carries anything but JSON-RPC; the server warns on stderr
when the token file is readable by group or others.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from server.tests.support.emulator import wait_until_in_flight
from server.tests.support.platforms import posix_signals
from server.tests.support.reliability import GET, SEARCH, RawServer, server_env, tally

pytestmark = pytest.mark.slow  # server subprocesses: the slow tier (`pytest -m slow`)

TEN_MB = 10 * 1024 * 1024
GARBAGE: list[tuple[str, bytes, int | None]] = [  # (what, line, the error code expected; None: no answer)
    ("not JSON", b"hello there\n", -32700),
    ("truncated JSON", b'{"jsonrpc": "2.0", "id": 7, "method": "tools/li\n', -32700),
    ("invalid UTF-8", b"\xff\xfe\x00\x9c garbage\n", -32700),
    ("a 10 MB non-JSON line", b"x" * TEN_MB + b"\n", -32700),
    ("a JSON array", b"[1, 2, 3]\n", -32600),
    ("an empty batch", b"[]\n", -32600),
    ("null", b"null\n", -32600),
    ("a bare string", b'"tools/list"\n', -32600),
    ("JSON-RPC 1.0", b'{"jsonrpc": "1.0", "id": 8, "method": "tools/list"}\n', -32600),
    ("no method, no result", b'{"jsonrpc": "2.0", "id": 9}\n', -32600),
    # The SDK reads a request whose id is not a string or number as a notification: nothing to answer.
    ("an object as id", b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}\n', None),
    ("a blank line", b"   \n", None),
    ("a response nobody asked for", b'{"jsonrpc": "2.0", "id": 4242, "result": {}}\n', None),
]
WRONG_SHAPES: list[tuple[str, dict, int]] = [  # valid JSON-RPC, wrong MCP: answered under their own id
    ("unknown method", {"method": "gmail/send"}, -32601),
    ("tools/call without params", {"method": "tools/call"}, -32602),
    ("tool name not a string", {"method": "tools/call", "params": {"name": 5}}, -32602),
    ("arguments not an object", {"method": "tools/call", "params": {"name": SEARCH, "arguments": [1]}}, -32602),
    ("unknown tool", {"method": "tools/call", "params": {"name": "gmail_delete", "arguments": {}}}, -32602),
]


@pytest.fixture
def token_file(emulator, tmp_path):
    return emulator.write_token(tmp_path / "token.json")


def start(emulator, token_file, tmp_path, **settings) -> RawServer:
    return RawServer(server_env(emulator, token_file, **settings), tmp_path / "stderr.log")


def stderr_events(server: RawServer) -> list[dict]:
    return [json.loads(line) for line in server.stderr_text().splitlines()]


def test_garbage_gets_json_rpc_errors_and_valid_requests_are_still_served(emulator, token_file, tmp_path):
    with start(emulator, token_file, tmp_path) as server:
        server.initialize()
        for _what, line, _code in GARBAGE:
            server.send(line)
        errors = []
        for _ in [code for *_, code in GARBAGE if code is not None]:
            message = server.next_message(timeout=20)
            assert message is not None and message.get("id") is None, message
            errors.append(message["error"]["code"])
        assert errors == [code for *_, code in GARBAGE if code is not None]  # in order, one per bad line
        for what, shape, code in WRONG_SHAPES:
            answer = server.request(shape["method"], shape.get("params"))
            assert answer.get("error", {}).get("code") == code, (what, answer)
        huge = server.call_tool(SEARCH, {"query": "a" * TEN_MB})  # a 10 MB line that is a valid request
        assert huge["isError"] is True and "at most 2000 characters" in huge["content"][0]["text"]
        assert len(json.dumps(huge)) < 5_000  # the error does not echo the 10 MB argument
        served = server.call_tool(SEARCH, {"query": "in:inbox", "max_results": 2})
        assert served.get("isError") is not True and served["structuredContent"]["result_count"] == 2
        assert server.request("ping") == {"jsonrpc": "2.0", "id": server._next_id, "result": {}}
        server.close_stdin()
        assert server.wait_exit(timeout=5) == 0
        assert server.stdout_is_only_json_rpc() and server.others == []
        assert "x" * 100 not in server.stderr_text()  # malformed input is not logged back
    tally("garbage_lines", len(GARBAGE) + len(WRONG_SHAPES) + 1)


def test_eof_exits_cleanly_and_warns_about_an_open_token_file(emulator, token_file, tmp_path):
    token_file.chmod(0o644)
    with start(emulator, token_file, tmp_path) as server:
        server.initialize()
        assert server.call_tool(GET, {"message_id": emulator.store.messages[0].id}).get("isError") is not True
        server.close_stdin()
        assert server.wait_exit(timeout=20) == 0  # a server that never exits fails here, whatever the load
        assert server.stdout_is_only_json_rpc()
        events = stderr_events(server)
    if os.name == "posix":
        assert any("readable by other users" in event["event"] and "chmod 600" in event["event"] for event in events)
    assert events[-1]["event"] == "metrics summary"
    tally("lifecycle_case", case="EOF, idle")


@pytest.mark.parametrize("how", ["EOF", pytest.param("SIGTERM", marks=posix_signals)])
def test_shutdown_is_prompt_even_while_gmail_hangs(emulator, token_file, tmp_path, how):
    with start(emulator, token_file, tmp_path, GMAIL_MCP_TIMEOUT_S="30") as server:
        server.initialize()
        server.call_tool(SEARCH, {"query": "in:inbox", "max_results": 1})  # warm: token refreshed
        emulator.add_fault(hang=True, count=10)
        hung_call = {"name": SEARCH, "arguments": {"query": "x"}}
        server.send_json({"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": hung_call})
        wait_until_in_flight(emulator, r"^/gmail/")  # the call is blocked on Gmail, in a worker thread, for 3 x 30 s
        if how == "EOF":
            server.close_stdin()
        else:
            server.process.send_signal(signal.SIGTERM)
        # Waiting for the hung call would take its 30 s timeout (three times): exiting before 20 s means it did not.
        assert server.wait_exit(timeout=20) == 0
        assert server.stdout_is_only_json_rpc()
        assert stderr_events(server)[-1]["event"] == "metrics summary"
    tally("lifecycle_case", case=f"{how} during a hung Gmail call")


@posix_signals
def test_sigterm_with_stdin_left_open_exits_cleanly(emulator, token_file, tmp_path):
    token_file.chmod(0o600)
    with start(emulator, token_file, tmp_path) as server:
        server.initialize()
        server.process.send_signal(signal.SIGTERM)  # the client never closes stdin: a reader thread is blocked
        assert server.wait_exit(timeout=20) == 0  # a reader thread that held the exit would hold it for ever
        events = stderr_events(server)
    assert not any("readable by other users" in event["event"] for event in events)
    assert events[-1]["event"] == "metrics summary"
    tally("lifecycle_case", case="SIGTERM, idle, stdin open")
