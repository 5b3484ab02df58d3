#!/usr/bin/env bash
# The Node/browser tier: the AG-UI client conformance suite (tests/agui-node: the real @ag-ui/client
# 1.0.0 and 0.0.59 against `agent-adaptor serve`), the ACP client SDK test (tests/acp-node: the official
# @agentclientprotocol/sdk 2.4.0 driving `agent-adaptor acp` over stdio), the acpx smoke test (tests/acpx:
# the headless ACP client acpx 0.19.1, on the Node 22 binary it needs from the npm registry) and the web demo's end-to-end test (web-demo/e2e:
# CopilotKit in Debian's headless chromium, against the `reference` agent and, when the pinned CLI is
# installed, the real Claude CLI talking to `mock-model-server`; web-demo/e2e/console.test.mjs drives the
# service's own console at `/` in dev and keyed mode), and the OpenAPI lint (tests/openapi-lint:
# the pinned Redocly CLI on the committed openapi/openapi.json, 0 problems), and the short variant of the peer
# benchmark (benches/peers: the Claude CLI alone, ag-ui-claude-sdk and the service; it prints the table and fails
# only when a path did not complete). Installs the pinned npm dependencies
# (npm ci, no install scripts), installs chromium from apt when it is missing and we are root, builds
# the binaries, runs both. Exits non-zero on any failure; prints "SKIPPED: <why>" and exits 0 only when
# node is missing. The real-Claude scenarios print "SKIPPED: <why>" without the CLI, and fail instead
# with AGENT_ADAPTOR_REQUIRE_CLIS=1.
#
#   scripts/test-web.sh                 # everything
#   AGENT_ADAPTOR_BIN=... scripts/test-web.sh   # reuse a built binary (mock-model-server next to it)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
start=$(date +%s)

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "SKIPPED: node/npm not installed (the AG-UI conformance suite, the ACP SDK test and the web-demo e2e need Node >= 20)"
  exit 0
fi

export COPILOTKIT_TELEMETRY_DISABLED=true DO_NOT_TRACK=1 SCARF_ANALYTICS=false
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

chromium="${CHROMIUM_BIN:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing chromium from apt" >&2
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
  else
    echo "chromium is missing at $chromium and cannot be installed (not root): apt-get install -y chromium" >&2
    exit 1
  fi
fi
export CHROMIUM_BIN="$chromium"

if [ -z "${AGENT_ADAPTOR_BIN:-}" ]; then
  echo "== cargo build --bin agent-adaptor --bin mock-model-server" >&2
  (cd "$root" && cargo build --quiet --bin agent-adaptor --bin mock-model-server)
  AGENT_ADAPTOR_BIN="${CARGO_TARGET_DIR:-$root/target}/debug/agent-adaptor"
fi
export AGENT_ADAPTOR_BIN
# The pinned real CLIs, when installed (scripts/install-clis.sh) and not already pointed at.
if [ -z "${AGENT_ADAPTOR_CLAUDE_BIN:-}" ]; then
  eval "$("$root/scripts/install-clis.sh" --env)"
fi
unset AGENT_ADAPTOR_URL

for dir in tests/agui-node tests/acp-node tests/acpx tests/openapi-lint web-demo; do
  echo "== npm install from the lock ($dir)" >&2
  if [ "$dir" = tests/acpx ]; then
    # acpx's @openclaw/fs-safe names per-platform optional packages the registry
    # does not publish at its version; npm 11's `npm ci` then calls the lock out of
    # sync however it is made. `npm install --no-save` installs the same locked tree.
    (cd "$root/$dir" && npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  else
    (cd "$root/$dir" && npm ci --ignore-scripts --loglevel=error >&2)
  fi
done

failed=0
echo "== OpenAPI lint (tests/openapi-lint: Redocly CLI, recommended-strict)"
(cd "$root/tests/openapi-lint" && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
  npx --no-install redocly lint --config redocly.yaml "$root/openapi/openapi.json") || failed=1

echo "== AG-UI client conformance (tests/agui-node)"
(cd "$root/tests/agui-node" && node --test --test-concurrency=1 test/) || failed=1

echo "== ACP client SDK (tests/acp-node: @agentclientprotocol/sdk 2.4.0 against agent-adaptor acp)"
(cd "$root/tests/acp-node" && node --test --test-concurrency=1 test/) || failed=1

echo "== acpx smoke (tests/acpx: acpx 0.19.1 on Node 22 from npm drives agent-adaptor acp)"
(cd "$root/tests/acpx" && node --test --test-concurrency=1 test/) || failed=1

echo "== peer benchmark, short CI variant (benches/peers/run.sh --ci: fails only when a path did not complete)"
"$root/benches/peers/run.sh" --ci || failed=1

echo "== web-demo build"
(cd "$root/web-demo" && npm run --silent build >/dev/null) || failed=1
echo "== web-demo e2e and the console in chromium (web-demo/e2e)"
(cd "$root/web-demo" && node --test --test-concurrency=1 e2e/) || failed=1

echo "== test-web.sh took $(($(date +%s) - start)) s" >&2
exit "$failed"
