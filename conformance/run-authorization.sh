#!/usr/bin/env bash
# The official MCP conformance suite's `authorization` command against this server's OAuth authorization server,
# served on loopback with the Gmail emulator as Google; conformance/run_authorization.py plays the person in the
# browser (consent, Google's page) so it runs with no one at the keyboard. No stdin.
#   conformance/run-authorization.sh          # results in dist/conformance-results/authorization
set -euo pipefail
cd "$(dirname "$0")/.."
source conformance/tools.sh
PYTHON="${PYTHON:-.venv/bin/python}"
RESULTS=dist/conformance-results/authorization

conformance_tools
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
status=0
PYTHONPATH="$PWD" GMAIL_MCP_LOG_LEVEL=WARNING "$PYTHON" conformance/run_authorization.py "$NODE" "$SUITE" "$RESULTS" \
  </dev/null || status=$?
"$PYTHON" conformance/summary.py "$RESULTS"
exit "$status"
