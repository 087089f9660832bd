"""`python -m server.main --check` diagnoses a set-up and says how to fix it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from server.runtime.config import PROJECT_ROOT
from server.tests.support.emulator import emulator_env
from server.tests.support.platforms import posix_permissions


def check(tmp_path: Path, env_overrides: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Runs the doctor with none of the caller's GMAIL_* settings (an absent OAuth client file: only a warning)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GMAIL_")}
    env.update(PYTHONPATH=str(PROJECT_ROOT), GMAIL_CREDENTIALS_PATH=str(tmp_path / "no-credentials.json"))
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "-m", "server.main", "--check"], env=env, cwd="/", capture_output=True, text=True, timeout=60
    )


def test_a_working_setup_passes_every_check(emulator, tmp_path):
    token = emulator.write_token(tmp_path / "token.json")
    result = check(tmp_path, emulator_env(emulator, token))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"[  ok] token file {token}" in result.stdout
    assert "[  ok] access token valid" in result.stdout
    assert f"Gmail answers for {emulator.store.email_address}" in result.stdout
    assert "[fail]" not in result.stdout and "readable by other users" not in result.stdout
    assert result.stderr == ""  # no log lines interleaved with the checklist unless --verbose


def test_a_missing_token_fails_with_the_fix(tmp_path):
    result = check(tmp_path, {"GMAIL_TOKEN_PATH": str(tmp_path / "absent.json")})
    assert result.returncode == 1
    assert "[fail] No Gmail token file" in result.stdout and "auth_cli.py" in result.stdout


@posix_permissions
def test_an_open_token_file_is_flagged(emulator, tmp_path):
    token = emulator.write_token(tmp_path / "token.json")
    token.chmod(0o644)
    result = check(tmp_path, emulator_env(emulator, token))
    assert result.returncode == 0, result.stdout  # a warning: Gmail still works
    assert f"[warn] {token} is readable by other users: chmod 600 {token}" in result.stdout
    assert f"Gmail answers for {emulator.store.email_address}" in result.stdout


def test_verbose_check_shows_the_log_lines_on_stderr(emulator, tmp_path):
    token = emulator.write_token(tmp_path / "token.json")
    env = {key: value for key, value in os.environ.items() if not key.startswith("GMAIL_")}
    env.update(PYTHONPATH=str(PROJECT_ROOT), **emulator_env(emulator, token))
    result = subprocess.run(
        [sys.executable, "-m", "server.main", "--check", "--verbose"],
        env=env,
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0 and "[  ok]" in result.stdout
    assert '"event": "gmail request"' in result.stderr and "[  ok]" not in result.stderr


def test_an_invalid_log_level_is_an_error_naming_the_allowed_values(tmp_path):
    result = check(tmp_path, {"GMAIL_MCP_LOG_LEVEL": "verbose"})
    assert result.returncode == 2
    assert "GMAIL_MCP_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, got 'verbose'" in result.stderr
    assert result.stdout.startswith("[fail] invalid setting: GMAIL_MCP_LOG_LEVEL")
