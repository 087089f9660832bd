#!/usr/bin/env bash
# Builds dist/gmail-mcp.mcpb, the Claude Desktop extension (MCP Bundle, server type `uv`: Claude Desktop installs
# the dependencies of pyproject.toml with uv on the person's machine; nothing compiled is bundled), and checks it
# with the official CLI: `mcpb validate` on the manifest, `mcpb pack` (which validates again), `mcpb info`.
# Needs Node 18+ (npx). No prompts: npx --yes, the CLI's version pinned.
#   packaging/mcpb/build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
MCPB="@anthropic-ai/mcpb@2.1.2"
STAGE=dist/mcpb
BUNDLE=dist/gmail-mcp.mcpb
mcpb() { npx --yes "$MCPB" "$@" </dev/null; }

rm -rf "$STAGE" "$BUNDLE"
mkdir -p "$STAGE"
cp packaging/mcpb/manifest.json packaging/mcpb/gmail_mcp_extension.py README.md LICENSE "$STAGE/"
# The project's pyproject.toml, run as a plain (non-package) uv project: uv installs the dependencies and the
# launcher imports `server` from the folder, so nothing is built on the person's machine.
{ cat pyproject.toml; printf '\n# Added by packaging/mcpb/build.sh for the bundle.\n[tool.uv]\npackage = false\n'; } \
  >"$STAGE/pyproject.toml"
# The server as the wheel ships it: no tests, no demo mailbox generator, no caches.
tar -cf - --exclude=server/tests --exclude=server/demo/generator --exclude=__pycache__ --exclude='*.pyc' server \
  | tar -xf - -C "$STAGE"

mcpb validate "$STAGE/manifest.json"
mcpb pack "$STAGE" "$BUNDLE"
mcpb info "$BUNDLE"
PYTHON="$(command -v .venv/bin/python || command -v python3)"
"$PYTHON" - "$BUNDLE" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
missing = {"manifest.json", "pyproject.toml", "gmail_mcp_extension.py", "server/main.py", "server/demo/mailbox.mbox"}
missing -= set(names)
extra = [n for n in names if n.startswith(("server/tests/", "server/demo/generator/", ".venv/")) or "__pycache__" in n]
if missing or extra:
    sys.exit(f"{sys.argv[1]}: missing {sorted(missing)}, should not carry {extra[:5]}")
print(f"{sys.argv[1]}: {len(names)} files, no tests, no generator")
PY
