#!/usr/bin/env bash
# The test command: installs what the tests need (pinned), starts what they need, runs every tier.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh -E 'test(store)'   # extra args go to cargo nextest
#
# Tiers that need something absent print "SKIPPED: <why>"; with AGENT_ADAPTOR_REQUIRE_CLIS=1
# (as .ci/run sets) a missing CLI is a failure instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

echo "== installing the pinned CLIs" >&2
eval "$(scripts/install-clis.sh)"

# PostgreSQL for the store tier: use DATABASE_URL, or the local server on 127.0.0.1:5432.
if [ -z "${DATABASE_URL:-}" ]; then
  if command -v pg_isready >/dev/null && ! pg_isready -h 127.0.0.1 -p 5432 -q; then
    echo "== starting PostgreSQL" >&2
    if command -v pg_ctlcluster >/dev/null; then
      pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
    fi
  fi
  if command -v pg_isready >/dev/null && pg_isready -h 127.0.0.1 -p 5432 -q; then
    export DATABASE_URL="postgres://postgres@127.0.0.1:5432/test"
  else
    echo "SKIPPED: PostgreSQL tier (no DATABASE_URL and nothing on 127.0.0.1:5432)" >&2
  fi
fi

# The README walkthrough test (tests/it/server/readme.rs) pastes the README's curl block into bash: it needs jq.
if ! command -v jq >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "== installing jq from apt" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq curl >&2
fi

if ! cargo nextest --version >/dev/null 2>&1; then
  echo "== installing cargo-nextest (pinned)" >&2
  cargo install --locked cargo-nextest@0.9.143
fi

echo "== running the test suite" >&2
status=0
cargo nextest run --workspace --no-fail-fast "$@" || status=$?
echo "== running doc tests" >&2
cargo test --workspace --doc
echo "== running the API fuzz tier, short (schemathesis, dev mode + SQLite; full matrix: scripts/api-fuzz.sh)" >&2
scripts/api-fuzz.sh --ci || status=$?
echo "== running acplint against agent-adaptor acp (scripts/acplint.sh: known failures in tests/acplint)" >&2
scripts/acplint.sh || status=$?
echo "== running the Python client's tests (scripts/test-python-client.sh)" >&2
scripts/test-python-client.sh || status=$?
echo "== running the Node/browser tier (AG-UI and ACP clients, web demo in chromium)" >&2
scripts/test-web.sh
exit "$status"
