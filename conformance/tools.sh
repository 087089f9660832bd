# Sourced by the conformance scripts: installs the pinned official MCP conformance suite and the Node 22 it needs
# (conformance/package.json and package-lock.json: @modelcontextprotocol/conformance 0.2.0-alpha.12, and Node
# 22.22.0 from the npm registry's `node` package, whatever Node the machine has) into dist/conformance with
# `npm ci`, once per lockfile, then sets NODE and SUITE. Needs npm (any Node >= 18 to run npm) and the registry.
CONFORMANCE_TOOLS=dist/conformance
NODE="$CONFORMANCE_TOOLS/node_modules/node/bin/node"
SUITE="$CONFORMANCE_TOOLS/node_modules/@modelcontextprotocol/conformance/dist/index.js"

conformance_tools() {
  if [ -x "$NODE" ] && [ -f "$SUITE" ] && cmp -s conformance/package-lock.json "$CONFORMANCE_TOOLS/package-lock.json"; then
    return 0
  fi
  echo "installing the conformance suite and Node 22 into $CONFORMANCE_TOOLS (npm ci)" >&2
  rm -rf "$CONFORMANCE_TOOLS"
  mkdir -p "$CONFORMANCE_TOOLS"
  cp conformance/package.json conformance/package-lock.json "$CONFORMANCE_TOOLS/"
  # --ignore-scripts=false: the `node` package fetches its platform's binary in a preinstall script.
  (cd "$CONFORMANCE_TOOLS" && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts=false </dev/null)
  "$NODE" --version >/dev/null
}
