#!/usr/bin/env bash
# Creates .venv (Python 3.10+), installs requirements.txt, and prints a ready Claude Desktop config entry.
# Idempotent: a second run reuses .venv and skips pip when requirements.txt has not changed.
#   ./setup_env.sh            set up, then print the config entry
#   ./setup_env.sh --quiet    set up only
set -euo pipefail
cd "$(dirname "$0")"
ROOT="$(pwd)"
QUIET=0
[ "${1:-}" = "--quiet" ] && QUIET=1

say() { [ "$QUIET" = 1 ] || printf '%s\n' "$*"; }

find_python() {
  for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3.10 python3 python; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

if [ ! -x .venv/bin/python ]; then
  if ! PY="$(find_python)"; then
    echo "error: Python 3.10 or newer is required (set PYTHON=/path/to/python3.x to choose one)." >&2
    exit 1
  fi
  say "Creating .venv with $("$PY" --version 2>&1)..."
  "$PY" -m venv .venv
fi

STAMP=.venv/.requirements.sha256
WANT="$(.venv/bin/python -c 'import hashlib,sys; print(hashlib.sha256(open("requirements.txt","rb").read()).hexdigest())')"
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$WANT" ]; then
  say "Installing requirements.txt into .venv..."
  .venv/bin/python -m pip install --disable-pip-version-check --quiet --upgrade pip >/dev/null 2>&1 || true
  .venv/bin/python -m pip install --disable-pip-version-check --quiet -r requirements.txt
  echo "$WANT" > "$STAMP"
fi

if [ "$QUIET" = 0 ]; then
  case "$(uname -s)" in
    Darwin) CONFIG="$HOME/Library/Application Support/Claude/claude_desktop_config.json" ;;
    *)      CONFIG="${XDG_CONFIG_HOME:-$HOME/.config}/Claude/claude_desktop_config.json" ;;
  esac
  cat <<JSON
Ready. Add this to "mcpServers" in $CONFIG
(add "--demo" to "args" to try the bundled demo mailbox before any Google set-up):

    "gmail": {
      "command": "$ROOT/.venv/bin/python",
      "args": ["-m", "server.main"],
      "cwd": "$ROOT",
      "env": {"PYTHONPATH": "$ROOT"}
    }

Next: python server/auth_cli.py (once, to authorize your Gmail), then restart Claude Desktop.
JSON
fi
