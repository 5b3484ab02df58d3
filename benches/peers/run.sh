#!/usr/bin/env bash
# The peer benchmark (BENCHMARKS.md, "Side by side with the CLI and a peer"): the real Claude CLI alone,
# the Python peer ag-ui-claude-sdk 0.2.3 and `agent-adaptor serve`, through one AG-UI client on one
# instant mock model. Installs what it needs (the pinned CLIs, the peer in a venv under
# benches/peers/.venv from constraints.txt, @ag-ui/client from package-lock.json), builds the binaries,
# then runs bench.mjs, which prints the tables and exits non-zero only when a path did not complete.
#
#   benches/peers/run.sh                  # full figures: 20 samples, 3 waves of 8 (release build)
#   benches/peers/run.sh --ci             # the short CI variant: 3 samples, 1 wave (reuses AGENT_ADAPTOR_BIN)
#   AGENT_ADAPTOR_BIN=target/release/agent-adaptor benches/peers/run.sh --runs 9
#
# Without node, python3 or the Claude CLI it prints "SKIPPED: <why>" and exits 0 (a missing CLI fails
# instead with AGENT_ADAPTOR_REQUIRE_CLIS=1). PEERS_VENV moves the venv.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

for tool in node npm python3; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: peer benchmark ($tool is not installed)"
    exit 0
  fi
done
if [ -z "${AGENT_ADAPTOR_CLAUDE_BIN:-}" ]; then
  eval "$("$root/scripts/install-clis.sh" --env)"
fi
if [ -z "${AGENT_ADAPTOR_CLAUDE_BIN:-}" ] || [ ! -x "${AGENT_ADAPTOR_CLAUDE_BIN}" ]; then
  if [ "${AGENT_ADAPTOR_REQUIRE_CLIS:-}" = 1 ]; then
    echo "peer benchmark: the Claude CLI is required (AGENT_ADAPTOR_REQUIRE_CLIS=1) but not installed" >&2
    exit 1
  fi
  echo "SKIPPED: peer benchmark (the Claude CLI is not installed: scripts/install-clis.sh)"
  exit 0
fi
export AGENT_ADAPTOR_CLAUDE_BIN

if [ -z "${AGENT_ADAPTOR_BIN:-}" ]; then
  echo "== cargo build --release --bin agent-adaptor --bin mock-model-server" >&2
  (cd "$root" && cargo build --quiet --release --bin agent-adaptor --bin mock-model-server)
  AGENT_ADAPTOR_BIN="${CARGO_TARGET_DIR:-$root/target}/release/agent-adaptor"
fi
export AGENT_ADAPTOR_BIN
export MOCK_MODEL_SERVER_BIN="${MOCK_MODEL_SERVER_BIN:-$(dirname "$AGENT_ADAPTOR_BIN")/mock-model-server}"
if [ ! -x "$MOCK_MODEL_SERVER_BIN" ]; then
  echo "peer benchmark: no mock-model-server at $MOCK_MODEL_SERVER_BIN (cargo build --bin mock-model-server)" >&2
  exit 1
fi

# The peer, pinned: ag-ui-claude-sdk and every dependency from constraints.txt. Reinstalled only when
# the constraints changed (a stamp holds their hash).
venv="${PEERS_VENV:-$here/.venv}"
stamp="$venv/.constraints.sha256"
want="$(sha256sum "$here/constraints.txt" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "== python venv with ag-ui-claude-sdk 0.2.3 ($venv)" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --require-virtualenv \
    -c "$here/constraints.txt" "ag-ui-claude-sdk==0.2.3" >&2
  echo "$want" > "$stamp"
fi
export PEER_PYTHON="$venv/bin/python"

echo "== npm ci (benches/peers: @ag-ui/client 1.0.0)" >&2
(cd "$here" && npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false \
  npm ci --ignore-scripts --loglevel=error >&2)

exec node "$here/bench.mjs" "$@"
