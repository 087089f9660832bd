"""`python -m server.main --check` diagnoses a set-up and says how to fix it."""

from __future__ import annotations

import os
import subprocess
import sys

from server.runtime.config import PROJECT_ROOT
from server.tests.support.emulator import emulator_env


def check(env_overrides: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **env_overrides}
    return subprocess.run(
        [sys.executable, "-m", "server.main", "--check"], env=env, cwd="/", capture_output=True, text=True, timeout=60
    )


def test_a_working_setup_passes_every_check(emulator, tmp_path):
    token = emulator.write_token(tmp_path / "token.json")
    result = check(emulator_env(emulator, token))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # stdout is reserved for MCP, even here
    assert f"Gmail answers for {emulator.store.email_address}" in result.stderr
    assert "[  ok] access token valid" in result.stderr


def test_a_missing_token_fails_with_the_fix(tmp_path):
    result = check({"GMAIL_TOKEN_PATH": str(tmp_path / "absent.json")})
    assert result.returncode == 1
    assert "[fail] No Gmail token file" in result.stderr and "auth_cli.py" in result.stderr


def test_an_open_token_file_is_flagged(emulator, tmp_path):
    token = emulator.write_token(tmp_path / "token.json")
    token.chmod(0o644)
    result = check(emulator_env(emulator, token))
    if os.name == "posix":
        assert f"chmod 600 {token}" in result.stderr
