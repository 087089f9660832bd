"""The contract suite runs where docs/contract-tests.md says: every contract check once against the emulator in
the default `pytest` run (the first step of `.ci/run`), and once against the live target under `pytest -m live`.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from server.runtime.config import PROJECT_ROOT

pytestmark = pytest.mark.slow  # two pytest subprocesses: the slow tier (`pytest -m slow`)

CONTRACT = PROJECT_ROOT / "server" / "tests" / "contract"


def collected(*options: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *options, str(CONTRACT)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return [line for line in result.stdout.splitlines() if "::" in line]


def variants(ids: list[str]) -> dict[str, set[str]]:
    """{check name without its target: the targets it was collected for}."""
    found: dict[str, set[str]] = {}
    for test_id in ids:
        match = re.search(r"::(\w+)\[(emulator|live)(?:-(.*))?\]$", test_id)
        if match:
            found.setdefault(f"{match[1]}[{match[3] or ''}]", set()).add(match[2])
    return found


def test_the_default_run_checks_the_emulator_and_the_live_run_the_live_target() -> None:
    default = variants(collected())
    live = variants(collected("-m", "live"))

    assert len(default) >= 20, default
    assert all(targets == {"emulator"} for targets in default.values()), default
    assert set(live) == set(default)
    assert all(targets == {"live"} for targets in live.values()), live
