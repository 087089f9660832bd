#!/usr/bin/env bash
# The official MCP conformance suite's server scenarios against this server over streamable HTTP: every scenario
# the 2026-07-28 requirement set names (stateless requests) and every one of 2025-11-25 (the handshake era), plus
# what the suite runs beside them unscored (extensions, pending scenarios).
#
# Starts `python -m server.main --demo --http 127.0.0.1:0` (the demo mailbox on the local emulator: no Google
# account) with the TEST-ONLY fixtures the suite calls by name (GMAIL_MCP_CONFORMANCE_FIXTURES=1), runs the suite
# against it once per requirement set with conformance/expected-failures.yml, prints the counts, and stops the
# server. Exits non-zero on any
# failure (or SHOULD warning) not in that file, and on an entry of it that now passes. No prompts, no stdin.
#   conformance/run-server.sh                  # results in dist/conformance-results/server/<set>
#   conformance/run-server.sh --verbose        # further arguments go to the suite
set -euo pipefail
cd "$(dirname "$0")/.."
source conformance/tools.sh
PYTHON="${PYTHON:-.venv/bin/python}"
REQUIREMENT_SETS=(2026-07-28 2025-11-25)
RESULTS=dist/conformance-results/server
START_TIMEOUT_S=60

conformance_tools
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
LOG="$RESULTS/server.log"

GMAIL_MCP_CONFORMANCE_FIXTURES=1 GMAIL_MCP_LOG_LEVEL=INFO GMAIL_MCP_QUOTA_UNITS_PER_S=0 \
  "$PYTHON" -m server.main --demo --http 127.0.0.1:0 </dev/null >/dev/null 2>"$LOG" &
SERVER_PID=$!
stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
}
trap stop_server EXIT

URL=""
for _ in $(seq $((START_TIMEOUT_S * 10))); do
  URL="$(sed -n 's/.*"serving MCP over streamable HTTP at \(http:[^"]*\)".*/\1/p' "$LOG" | head -n 1)"
  [ -n "$URL" ] && break
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "the server exited before serving:" >&2
    tail -n 20 "$LOG" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$URL" ]; then
  echo "the server did not start within ${START_TIMEOUT_S}s:" >&2
  tail -n 20 "$LOG" >&2
  exit 1
fi
status=0
for requirements in "${REQUIREMENT_SETS[@]}"; do
  echo "conformance: server scenarios of $requirements against $URL" >&2
  out="$RESULTS/$requirements"
  mkdir -p "$out"
  leg=0
  "$NODE" "$SUITE" server --url "$URL" --requirements "$requirements" \
    --expected-failures conformance/expected-failures.yml --output-dir "$out" "$@" </dev/null >"$out/suite.txt" 2>&1 ||
    leg=$?
  sed -n '/=== SUMMARY ===/,$p' "$out/suite.txt"
  "$PYTHON" conformance/summary.py "$out"
  if [ "$leg" -ne 0 ]; then
    echo "conformance: $requirements FAILED (exit $leg; details in $out/suite.txt and its checks.json files)" >&2
    status=$leg
  fi
done
exit "$status"
