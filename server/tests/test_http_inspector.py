"""The MCP Inspector CLI (a real TypeScript client) lists and calls the tools over streamable HTTP with a bearer
token, and its --strict schema check finds nothing to report. It needs Node >= 22.19 and the Inspector package,
which CI machines may lack: point GMAIL_MCP_INSPECTOR at the launcher (`.../inspector/clients/launcher/build/
index.js`) and, if `node` is older, GMAIL_MCP_NODE at a Node 22 binary; without them the test is skipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from server.tests.support.emulator import emulator_env
from server.tests.support.http_server import TEST_SERVER_ENV, http_server

INSPECTOR = os.environ.get("GMAIL_MCP_INSPECTOR", "")
NODE = os.environ.get("GMAIL_MCP_NODE") or shutil.which("node") or "node"
TOKEN = "inspector-token-0123456789abcdef"

pytestmark = pytest.mark.skipif(
    not INSPECTOR or not os.path.exists(INSPECTOR),
    reason="MCP Inspector not configured (GMAIL_MCP_INSPECTOR=.../clients/launcher/build/index.js, Node >= 22.19)",
)


def inspector(url: str, *arguments: str, home) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NODE, INSPECTOR, "--cli", url, *arguments],
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_the_inspector_lists_and_calls_the_tools_over_http(tmp_path, demo_emulator):
    emulator = demo_emulator
    env = emulator_env(
        emulator, emulator.write_token(tmp_path / "token.json"), **TEST_SERVER_ENV, GMAIL_MCP_HTTP_TOKEN=TOKEN
    )
    with http_server(env) as server:
        listed = inspector(
            server.url,
            "--header",
            f"Authorization: Bearer {TOKEN}",
            "--method",
            "tools/list",
            "--strict",
            home=tmp_path,
        )
        called = inspector(
            server.url,
            "--header",
            f"X-API-Key: {TOKEN}",
            "--method",
            "tools/call",
            "--tool-name",
            "gmail_search_messages",
            "--tool-arg",
            "query=in:inbox",
            "max_results=2",
            home=tmp_path,
        )
        refused = inspector(server.url, "--method", "tools/list", "--stored-auth-only", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert {tool["name"] for tool in json.loads(listed.stdout)["tools"]} >= {"gmail_search_messages"}
    assert called.returncode == 0, called.stderr
    answer = json.loads(called.stdout)
    assert answer["structuredContent"]["result_count"] == 2
    assert answer["structuredContent"]["mailbox"] == emulator.store.email_address
    assert refused.returncode != 0  # no token: 401, and the Inspector gives up
