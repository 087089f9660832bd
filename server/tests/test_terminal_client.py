"""The terminal client (`python -m server.cli`) as a person uses it: the server's own error when it cannot start,
demo page tokens that work in the next run, and `--json` that keeps the error's category and hint."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from server.runtime.config import PROJECT_ROOT

pytestmark = pytest.mark.slow  # terminal client subprocesses: the slow tier (`pytest -m slow`)


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {key: value for key, value in os.environ.items() if not key.startswith("GMAIL_")}
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        env={**clean, "PYTHONPATH": str(PROJECT_ROOT), **env},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_server_that_cannot_start_is_explained_in_one_line_not_a_traceback():
    result = cli("--demo", "search", "in:inbox", GMAIL_MCP_ENRICH_TOP_K="-1")
    assert result.returncode == 1
    assert "invalid setting: GMAIL_MCP_ENRICH_TOP_K must be >= 0" in result.stderr
    assert "Traceback" not in result.stderr and "ExceptionGroup" not in result.stderr and len(result.stderr) < 500


def test_a_demo_page_token_works_in_the_next_run():
    first = cli("--demo", "search", "in:inbox", "--max", "2")
    assert first.returncode == 0, first.stderr
    token = re.search(r'page_token="([^"]+)"', first.stdout).group(1)
    second = cli("--demo", "search", "in:inbox", "--max", "2", "--page-token", token)
    assert second.returncode == 0, second.stdout + second.stderr
    ids = lambda text: re.findall(r"^\d+\. ([0-9a-f]{16}) ", text, re.M)  # noqa: E731
    assert len(ids(second.stdout)) == 2 and not set(ids(first.stdout)) & set(ids(second.stdout))


def test_json_output_keeps_is_error_and_the_errors_category_and_hint():
    result = cli("--demo", "get", "0000000000000000", "--json")
    assert result.returncode == 1
    answer = json.loads(result.stdout)
    error = answer["_meta"]["gmail-mcp/error"]
    assert answer["isError"] is True and error["category"] == "not_found" and error["hint"]
    assert answer["content"][0]["text"].startswith("Error (not_found)")
