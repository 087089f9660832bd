"""No mail body reaches a log line through the libraries: at DEBUG the MCP SDK and sse-starlette log whole JSON-RPC
messages (a tool result is a mail body) and httpx logs request URLs (queries), so `setup_logging` pins them at
WARNING in every mode, whatever later lowers the root logger. Each case runs in its own interpreter (logging is
process-global)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import logging, sys
    from server.runtime.observability import get_logger, setup_logging

    setup_logging(sys.argv[1])
    if sys.argv[2] == "root-lowered":  # e.g. an embedding app or a library's basicConfig(level=DEBUG)
        logging.getLogger().setLevel(logging.DEBUG)
    for name in ("mcp.server.streamable_http", "mcp.server.sse", "sse_starlette.sse", "httpx"):
        logging.getLogger(name).debug("BODY-OF-A-MAIL via %s", name)
        logging.getLogger(name).info("BODY-OF-A-MAIL via %s", name)
    logging.getLogger("mcp.server.lowlevel").warning("sdk warning")
    get_logger("http").debug("project debug line")
    """
)


def run(level: str, root: str) -> str:
    done = subprocess.run([sys.executable, "-c", SCRIPT, level, root], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # stdout belongs to MCP
    return done.stderr


@pytest.mark.parametrize("root", ["as-set", "root-lowered"])
def test_sdk_message_dumps_never_reach_the_log_even_at_debug(root: str) -> None:
    logged = run("DEBUG", root)
    assert "BODY-OF-A-MAIL" not in logged
    assert "project debug line" in logged and "sdk warning" in logged  # DEBUG is on for the project itself


def test_quiet_mode_stays_quiet_for_the_sdk_too() -> None:
    assert run("QUIET", "as-set") == ""
