"""What a person reads when a command cannot start: one plain line on stderr (not a JSON log line) naming the
flag, setting or host:port, and `--help` and hints that name the command as it was installed (`gmail-mcp`, not
`python -m server.main`). The console scripts are the ones setup_env installs into `.venv` (as pipx would)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from server.runtime.config import PROJECT_ROOT
from server.toolsets import ALL_TOOLSETS

SCRIPTS = Path(sys.executable).parent

pytestmark = pytest.mark.slow


def command(name: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = SCRIPTS / (name + (".exe" if os.name == "nt" else ""))
    if not script.exists():
        pytest.skip(f"{name} is not installed beside this Python (run setup_env)")
    clean = {key: value for key, value in os.environ.items() if not key.startswith("GMAIL_")}
    return subprocess.run(
        [str(script), *args], env={**clean, **env}, cwd="/", capture_output=True, text=True, timeout=60
    )


def plain_line(stderr: str) -> str:
    (line,) = stderr.strip().splitlines()
    with pytest.raises(ValueError):
        json.loads(line)
    return line


@pytest.mark.parametrize("name", ["gmail-mcp", "gmail-mcp-cli", "gmail-mcp-auth"])
def test_help_names_the_installed_command(name):
    assert command(name, "--help").stdout.startswith(f"usage: {name} ")


def test_an_unknown_enable_group_is_one_plain_line_with_the_valid_names():
    done = command("gmail-mcp", "--enable", "sendmail")
    assert done.returncode == 2
    valid = ", ".join(sorted(toolset.name for toolset in ALL_TOOLSETS if toolset.opt_in))  # drafts, labels, send...
    assert plain_line(done.stderr) == (
        "gmail-mcp: invalid setting: unknown write tool group(s) sendmail (GMAIL_MCP_WRITE_TOOLS / --enable); "
        f"valid: {valid}"
    )


def test_a_port_in_use_is_named(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = command("gmail-mcp", "--http", str(port), GMAIL_MCP_HOME=str(tmp_path))
    assert done.returncode == 2
    line = next(line for line in done.stderr.splitlines() if line.startswith("gmail-mcp: "))
    assert f"cannot listen on 127.0.0.1:{port}" in line and "--http PORT" in line


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_http_token_is_refused_not_served_without_authentication(tmp_path, value):
    # `export GMAIL_MCP_HTTP_TOKEN="$(python -c ...)"` where there is no `python` leaves it empty: on loopback the
    # server used to start with no authentication at all.
    done = command("gmail-mcp", "--http", "0", GMAIL_MCP_HOME=str(tmp_path), GMAIL_MCP_HTTP_TOKEN=value)
    assert done.returncode == 2
    line = next(line for line in done.stderr.splitlines() if line.startswith("gmail-mcp: "))
    assert "GMAIL_MCP_HTTP_TOKEN is set but empty" in line and "gmail-mcp --new-http-token" in line


def test_an_empty_token_file_is_refused(tmp_path):
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("# nothing yet\n")
    done = command("gmail-mcp", "--http", "0", GMAIL_MCP_HOME=str(tmp_path), GMAIL_MCP_HTTP_TOKEN_FILE=str(tokens))
    assert done.returncode == 2 and "holds no token" in done.stderr


def test_the_new_token_recipe_works_with_nothing_but_the_server():
    made = command("gmail-mcp", "--new-http-token")
    token = made.stdout.strip()
    assert made.returncode == 0 and len(token) >= 32 and token.isprintable() and " " not in token


def test_the_checkout_form_is_named_when_run_from_the_checkout():
    done = subprocess.run(
        [sys.executable, "-m", "server.main", "--enable", "nope"],
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert plain_line(done.stderr).startswith("python -m server.main: invalid setting: unknown write tool group")
