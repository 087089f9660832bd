"""Start-up: the `gmail-mcp` command builds the server with the cyclic garbage collector off, inside
`main.frozen_when_built`; however the build ends (served, a setting refused, an exception), what it built is
frozen and collection is back on. Over stdio, in fresh processes, and on the context manager itself."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest

from server.main import frozen_when_built
from server.runtime.config import PROJECT_ROOT
from server.tests.support.emulator import emulator_env
from server.tests.support.raw_jsonrpc import INITIALIZED, initialize
from server.toolsets import ALWAYS_ON_TOOLS

pytestmark = pytest.mark.slow  # fresh interpreters: the slow tier (`pytest -m slow`)

PROBE = """
import gc, json, os, sys
import server.main as entry

def report(code):
    collector = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count(), "code": code}
    sys.stderr.write("GC " + json.dumps(collector) + "\\n")
    sys.stderr.flush()
    os._exit(code)

entry.exit_now = report
entry.console_main()
"""

REQUESTS = [
    initialize(),
    INITIALIZED,
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "gmail_search_messages", "arguments": {"query": "in:inbox", "max_results": 2}},
    },
]


def run_command(env: dict[str, str], answers: int) -> tuple[list[dict], dict]:
    """`console_main` in a fresh process fed REQUESTS; (its first `answers` answers, the collector's state at exit)."""
    process = subprocess.Popen(
        [sys.executable, "-c", PROBE],
        env=env,
        cwd="/",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(request) + "\n" for request in REQUESTS).encode())
    process.stdin.flush()
    lines = [process.stdout.readline() for _ in range(answers)]  # keep stdin open until the answers are in
    _, stderr = process.communicate(timeout=30)
    reports = [line.split(" ", 1)[1] for line in stderr.decode().splitlines() if line.startswith("GC ")]
    assert reports, stderr.decode()[-2000:]
    return [json.loads(line) for line in lines], json.loads(reports[0])


def test_the_command_serves_with_the_collector_on_and_the_start_up_objects_frozen(demo_emulator, tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        **emulator_env(demo_emulator, demo_emulator.write_token(tmp_path / "token.json")),
        "GMAIL_MCP_WARM_UP": "0",
    }
    answers, collector = run_command(env, 3)
    assert [answer["id"] for answer in answers] == [1, 2, 3]
    assert {tool["name"] for tool in answers[1]["result"]["tools"]} == set(ALWAYS_ON_TOOLS)
    assert answers[2]["result"]["isError"] is False
    assert collector == {"enabled": True, "frozen": collector["frozen"], "code": 0} and collector["frozen"] > 50_000


def test_a_start_refused_inside_the_build_leaves_the_collector_on(demo_emulator, tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        **emulator_env(demo_emulator, demo_emulator.write_token(tmp_path / "token.json")),
        "GMAIL_MCP_DEFAULT_ACCOUNT": "no-such-account",  # refused by `serve`, inside the block
    }
    _, collector = run_command(env, 0)
    assert collector["code"] == 2 and collector["enabled"] is True and collector["frozen"] > 0


def test_the_block_freezes_what_was_built_and_turns_collection_back_on() -> None:
    frozen = gc.get_freeze_count()
    try:
        with frozen_when_built():
            assert not gc.isenabled()
            built = [[index] for index in range(1_000)]
        assert gc.isenabled() and gc.get_freeze_count() >= frozen + len(built)
    finally:
        gc.unfreeze()  # this test process keeps collecting everything, as before
        gc.enable()


def test_an_exception_inside_the_block_still_turns_collection_back_on() -> None:
    try:
        with pytest.raises(RuntimeError), frozen_when_built():
            raise RuntimeError("start-up failed")
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()
