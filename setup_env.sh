#!/usr/bin/env bash
# Creates .venv (Python 3.10+), installs requirements.txt and this project (editable, no dependencies), and prints
# a ready Claude Desktop config entry.
# Idempotent: a second run reuses .venv and skips pip when requirements.txt and pyproject.toml have not changed.
# A broken .venv (no Python, a Python that does not run, no pip) is removed and built again.
#   ./setup_env.sh                              set up, then print the config entry
#   ./setup_env.sh --quiet                      set up only
#   PYTHON=/path/to/python3.x ./setup_env.sh    create .venv with that interpreter
set -euo pipefail
cd "$(dirname "$0")"
ROOT="$(pwd)"
QUIET=0
[ "${1:-}" = "--quiet" ] && QUIET=1
VENV_PY=.venv/bin/python
PY310='import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'

say() { [ "$QUIET" = 1 ] || printf '%s\n' "$*"; }
die() { printf 'error: %s\n' "$1" >&2; shift; [ $# = 0 ] || printf '%s\n' "$@" >&2; exit 1; }

is_python310() { command -v "$1" >/dev/null 2>&1 && "$1" -c "$PY310" >/dev/null 2>&1; }

find_python() {
  if [ -n "${PYTHON:-}" ]; then  # an explicit choice is used or refused, never silently replaced
    is_python310 "$PYTHON" && echo "$PYTHON"
    return
  fi
  for candidate in python3.13 python3.12 python3.11 python3.10 python3 python; do
    if is_python310 "$candidate"; then echo "$candidate"; return 0; fi
  done
  return 1
}

# Why .venv cannot be used (empty when it works).
venv_problem() {
  if [ ! -e "$VENV_PY" ]; then echo "it has no bin/python"
  elif ! "$VENV_PY" -c "$PY310" >/dev/null 2>&1; then echo "its Python does not run or is older than 3.10"
  elif ! "$VENV_PY" -m pip --version >/dev/null 2>&1; then echo "it has no pip"
  fi
}

if [ -e .venv ] || [ -L .venv ]; then
  PROBLEM="$(venv_problem)"
  if [ -n "$PROBLEM" ]; then
    echo "The existing .venv is broken ($PROBLEM): removing it and creating a new one." >&2
    rm -rf .venv
    [ ! -e .venv ] || die "could not remove .venv; delete it by hand and run ./setup_env.sh again."
  elif [ -n "${PYTHON:-}" ]; then
    say "Reusing the existing .venv ($("$VENV_PY" --version 2>&1)); PYTHON only applies when .venv is created: delete .venv to rebuild it with $PYTHON."
  fi
fi

if [ ! -e .venv ]; then
  if ! PY="$(find_python)"; then
    if [ -n "${PYTHON:-}" ]; then
      die "PYTHON=$PYTHON is not a Python 3.10 or newer that runs here; point PYTHON at one (or unset it)."
    fi
    die "Python 3.10 or newer is required (set PYTHON=/path/to/python3.x to choose one)."
  fi
  PY_DESC="$(command -v "$PY") ($("$PY" --version 2>&1))"
  say "Creating .venv with $PY_DESC..."
  if ! "$PY" -m venv .venv || [ -n "$(venv_problem)" ]; then
    rm -rf .venv
    PY_XY="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    die "could not create a working .venv with $PY_DESC (usually its venv or ensurepip module is missing)." \
      "  Debian/Ubuntu: sudo apt install python$PY_XY-venv   then run ./setup_env.sh again" \
      "  or use another Python 3.10+:   PYTHON=/path/to/python3.x ./setup_env.sh"
  fi
fi

# The stamp covers everything pip installs from: requirements.txt and pyproject.toml (the project itself).
STAMP=.venv/.installed.sha256
WANT="$("$VENV_PY" -c 'import hashlib, sys
print(hashlib.sha256(b"".join(hashlib.sha256(open(n, "rb").read()).digest() for n in sys.argv[1:])).hexdigest())' \
  requirements.txt pyproject.toml)"
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$WANT" ]; then
  say "Installing requirements.txt and this project (editable) into .venv..."
  PIP=("$VENV_PY" -m pip install --disable-pip-version-check --quiet)
  "${PIP[@]}" --upgrade pip >/dev/null 2>&1 || true
  "${PIP[@]}" -r requirements.txt || die "pip could not install requirements.txt (see above)."
  # setuptools warns about editable installs on every success: show its output only when it fails.
  OUT="$("${PIP[@]}" --no-deps -e . 2>&1)" || { printf '%s\n' "$OUT" >&2; die "pip could not install this project into .venv (see above)."; }
  echo "$WANT" >"$STAMP"
fi
# Bytecode for the server's modules, written now so no start compiles them: Python writes none itself where
# PYTHONDONTWRITEBYTECODE is set (or the checkout is read-only), and compiling them costs a cold start a fifth more.
"$VENV_PY" -m compileall -q -x '[/\\]tests[/\\]' server >/dev/null 2>&1 || true

if [ "$QUIET" = 0 ]; then
  case "$(uname -s)" in
    Darwin) CONFIG="$HOME/Library/Application Support/Claude/claude_desktop_config.json" ;;
    *)      CONFIG="${XDG_CONFIG_HOME:-$HOME/.config}/Claude/claude_desktop_config.json" ;;
  esac
  AUTH_CMD="$(printf '%q %q' "$ROOT/.venv/bin/python" "$ROOT/server/auth_cli.py")"
  cat <<JSON
Ready. Add this to "mcpServers" in $CONFIG
(add "--demo" to "args" to try the bundled demo mailbox before any Google set-up):

    "gmail": {
      "command": "$ROOT/.venv/bin/python",
      "args": ["-m", "server.main"],
      "cwd": "$ROOT",
      "env": {"PYTHONPATH": "$ROOT"}
    }

Next: $AUTH_CMD (once, to authorize your Gmail), then restart Claude Desktop.
JSON
fi
