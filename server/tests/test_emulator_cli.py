"""`python -m server.emulator` as a subprocess: one URL line on stdout, JSON logs on stderr, clean stop."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from server.runtime.config import PROJECT_ROOT
from server.tests.support.platforms import posix_signals


@posix_signals
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_cli_prints_one_url_and_stops_cleanly(emulator_mailbox: Path, tmp_path: Path, stop_signal: int) -> None:
    token = tmp_path / "token.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "server.emulator", "--mailbox", str(emulator_mailbox), "--write-token", str(token)],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
        assert json.loads(token.read_text())["token_uri"] == url + "/token"
        with urllib.request.urlopen(url + "/_emulator/info", timeout=5) as response:
            assert json.loads(response.read())["messages"] > 30
        process.send_signal(stop_signal)
        stdout, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert stdout == ""  # nothing after the URL line
    lines = [json.loads(line) for line in stderr.splitlines() if line.strip()]
    assert any("serving" in line["message"] for line in lines)


def test_cli_reports_a_missing_mailbox(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "server.emulator", "--mailbox", str(tmp_path / "missing")],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert "mailbox not found" in result.stderr
