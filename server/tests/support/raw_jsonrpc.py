"""Raw JSON-RPC for tests that talk to `python -m server.main` without an MCP client, and fresh interpreters for
tests of what a process imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

from server.runtime.config import PROJECT_ROOT

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def initialize(request_id: int = 1, version: str = "2025-06-18", client: str = "raw") -> dict[str, Any]:
    """The handshake's first request, as a 2025-era client sends it."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": client, "version": "1"}},
    }


def line(message: dict[str, Any], end: bytes = b"\n") -> bytes:
    return json.dumps(message).encode() + end


def run_fresh(code: str) -> dict:
    """Runs `code` in a new interpreter from the checkout; returns the JSON its last stdout line holds."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])
