#!/usr/bin/env bash
# The official MCP conformance suite's `authorization` command against this server's OAuth authorization server
# (server/remote/), served on loopback with the Gmail emulator as Google, by server/tests/support/as_conformance.py,
# which registers the suite's callback as a client and plays the person in the browser (consent, Google's page), so
# it runs with no one at the keyboard. The suite and Node 22 are the pinned ones of conformance/tools.sh. No stdin.
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
PYTHONPATH="$PWD" GMAIL_MCP_LOG_LEVEL=WARNING "$PYTHON" -m server.tests.support.as_conformance \
  --npx "$NODE $SUITE" --output-dir "$RESULTS" </dev/null || status=$?
"$PYTHON" conformance/summary.py "$RESULTS"
exit "$status"
