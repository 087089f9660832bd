"""The hint catalogue: the advice that several errors share, written once.

Hints that name a command give the exact command of this installation: the absolute interpreter and script of
this checkout (`/home/me/gmail-mcp/.venv/bin/python /home/me/gmail-mcp/server/auth_cli.py`), or the installed
`gmail-mcp-auth` when the server itself was started as `gmail-mcp`. A bare `python server/auth_cli.py` fails with
the system Python (no Google libraries) and outside the project folder.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

_AUTH_SCRIPT = Path(__file__).resolve().with_name("auth_cli.py")


def _quote(part: str) -> str:
    # Windows paths keep their backslashes; only a path with spaces needs double quotes (cmd and PowerShell).
    if sys.platform == "win32":
        return f'"{part}"' if " " in part else part
    return shlex.quote(part)


def auth_command(*args: str) -> str:
    """The command that runs the one-time consent with `args`, as a person would paste it in a terminal."""
    launcher = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if launcher.startswith("gmail-mcp"):  # started through an installed console script: its sibling exists
        script = Path(sys.argv[0]).with_name("gmail-mcp-auth" + (".exe" if launcher.endswith(".exe") else ""))
        parts = [str(script.resolve()) if script.exists() else "gmail-mcp-auth"]
    else:
        parts = [sys.executable or "python", str(_AUTH_SCRIPT)]
    return " ".join(_quote(part) for part in [*parts, *args])


def installed_command() -> str | None:
    """The name of the installed console script this process was started as (`gmail-mcp`, `gmail-mcp-cli`), or
    None when it runs from a checkout (`python -m server.main`)."""
    launcher = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if launcher.startswith("gmail-mcp"):
        return launcher.removesuffix(".exe").removesuffix("-script.py")
    return None


def program_name(script: str, module: str) -> str:
    """What `--help` and error lines call a command: the installed `script` when it was started that way, else
    `python -m module` (the checkout's form)."""
    return script if installed_command() == script else f"python -m {module}"


def server_command(*args: str) -> str:
    """The command that runs the server with `args`: the installed `gmail-mcp` beside the running console script,
    or this checkout's interpreter with `-m server.main`."""
    launcher = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if launcher.startswith("gmail-mcp"):
        script = Path(sys.argv[0]).with_name("gmail-mcp" + (".exe" if launcher.endswith(".exe") else ""))
        parts = [str(script.resolve()) if script.exists() else "gmail-mcp"]
    else:
        parts = [sys.executable or "python", "-m", "server.main"]
    return " ".join(_quote(part) for part in [*parts, *args])


def quoted_auth_command(*args: str) -> str:
    """The command in backticks, for a sentence. PowerShell reads a line that starts with a quoted path as a
    string, not a command (`& "C:\\Users\\A B\\...python.exe" ...` runs it), and cmd refuses that `&`: a quoted
    Windows command comes with its PowerShell form too."""
    return quote_command(auth_command(*args))


def quote_command(command: str) -> str:
    """A command (as `auth_command` writes it) in backticks, with its PowerShell form when it starts quoted."""
    if command.startswith('"'):
        return f"`{command}` (PowerShell: `& {command}`)"
    return f"`{command}`"


def run_auth(purpose: str = "to authorize Gmail access", *args: str) -> str:
    """`Run `<command>` in a terminal <purpose>, then retry.`"""
    return f"Run {quoted_auth_command(*args)} in a terminal {purpose}, then retry."


def rerun_auth(what_to_allow: str = "", *args: str) -> str:
    """`Re-run `<command>`` plus what to allow on Google's consent screen."""
    tail = f" and {what_to_allow}" if what_to_allow else ""
    return f"Re-run {quoted_auth_command(*args)}{tail}."


NEW_CLIENT_FILE = (
    "Download the OAuth client JSON again from Google Cloud console > APIs & Services > Credentials (an OAuth "
    "client of type 'Desktop app') and save it as credentials.json (or where GMAIL_CREDENTIALS_PATH points)"
)
