"""Lint is part of the test suite, so the README's one test command (and CI) fails on lint errors."""

from __future__ import annotations

import subprocess
import sys

from server.runtime.config import PROJECT_ROOT


def test_ruff_finds_nothing():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
