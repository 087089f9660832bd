"""Start-up imports the whole running server, the Google client stack included, so a first tool call sent the
moment `tools/list` is answered waits for no import; only heavy optional libraries (pypdf, for PDF attachments)
load on first use. Checked in a fresh interpreter."""

from __future__ import annotations

import pytest

from server.tests.support.raw_jsonrpc import run_fresh

pytestmark = pytest.mark.slow  # fresh interpreters: the slow tier (`pytest -m slow`)

# What `gmail-mcp` imports before it answers `initialize` (main.serve builds the registry, then the stdio channel).
START = """
import json, sys
import server.main
from server.app.accounts import AccountRegistry
from server.protocol.dispatch import build_server
from server.protocol.stdio_guard import stdio_channel
"""
WHAT_A_FIRST_CALL_NEEDS = [
    "googleapiclient.discovery",
    "google_auth_httplib2",
    "httplib2",
    "server.gmail_client",
    "server.content.extract",
    "server.content.text.repeats",
]
HEAVY_AND_OPTIONAL = ["pypdf"]


def test_the_server_starts_with_what_a_first_call_needs_and_without_heavy_optional_libraries() -> None:
    seen = run_fresh(
        START + f"print(json.dumps(sorted(set({WHAT_A_FIRST_CALL_NEEDS + HEAVY_AND_OPTIONAL!r}) & set(sys.modules))))"
    )
    assert seen == sorted(WHAT_A_FIRST_CALL_NEEDS)
