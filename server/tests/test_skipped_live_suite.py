"""`pytest -m live` without a token: the skip reason and the command that fixes it show without `-rs`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from server.runtime.config import PROJECT_ROOT

pytestmark = pytest.mark.slow  # a pytest subprocess: the slow tier (`pytest -m slow`)

LIVE_SUITES = sorted(str(path) for path in (PROJECT_ROOT / "server" / "tests").glob("test_live_*.py"))


def test_live_tests_skipped_for_lack_of_a_token_say_how_to_authorize(tmp_path: Path) -> None:
    absent = tmp_path / "nowhere" / "token.json"
    env = {key: value for key, value in os.environ.items() if not key.startswith("GMAIL_")}
    env.update(PYTHONPATH=str(PROJECT_ROOT), GMAIL_TOKEN_PATH=str(absent))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "live", "-q", *LIVE_SUITES],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    command = f"{sys.executable} {PROJECT_ROOT / 'server' / 'auth_cli.py'}"
    hint = [line for line in result.stdout.splitlines() if "live tests skipped" in line]
    assert len(hint) == 1, result.stdout
    assert f"no Gmail token at {absent}" in hint[0] and f"Authorize once: {command}" in hint[0]
    assert " passed" not in result.stdout  # nothing reached a real inbox
