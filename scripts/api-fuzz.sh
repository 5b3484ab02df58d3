#!/usr/bin/env bash
# API fuzzing (issue #22): schemathesis (PyPI, pinned, in a venv under target/) over the document `serve`
# itself serves, every phase (examples, coverage, fuzzing, stateful links), in dev mode and with an API key,
# on SQLite and (with DATABASE_URL) on a Postgres database of its own. Fails on any finding.
#
#   scripts/api-fuzz.sh                         # the full matrix, AGENT_ADAPTOR_API_FUZZ_SECS (default 50) per run
#   AGENT_ADAPTOR_API_FUZZ_SECS=600 scripts/api-fuzz.sh
#   scripts/api-fuzz.sh --ci                    # what scripts/test.sh runs: dev mode + SQLite only, 45 s
#
# Checks: every schemathesis check (server errors, status codes the document does not list, response
# schemas, content types and headers, negative data accepted, authentication ignored, …) except two that
# judge state rather than the contract: `positive_data_acceptance` (a schema-valid request may be refused
# for what it names: an unknown skill, an approval already answered) and `ensure_resource_availability`
# (a declared thread has no Standby to cancel). The live SSE routes (a run's and a Standby's events) are
# left out: they stream until their run ends.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

ci=0
if [ "${1:-}" = "--ci" ]; then ci=1; fi
secs="${AGENT_ADAPTOR_API_FUZZ_SECS:-$([ "$ci" = 1 ] && echo 45 || echo 50)}"
venv="$root/target/api-fuzz/venv"
version="4.32.5"

if [ ! -x "$venv/bin/schemathesis" ] || ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$version"; then
  echo "== installing schemathesis $version into target/api-fuzz/venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
fi

echo "== building agent-adaptor" >&2
cargo build --quiet --bin agent-adaptor
bin="$root/target/debug/agent-adaptor"

work="$(mktemp -d)"
serve_pid=""
pg_db=""
cleanup() {
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  if [ -n "$pg_db" ]; then psql "$DATABASE_URL" -q -c "DROP DATABASE IF EXISTS \"$pg_db\" WITH (FORCE)" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

key="api-fuzz-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
cat >"$work/dev.toml" <<EOF
approval_timeout = "2s"
shutdown_grace = "1s"
EOF
cat >"$work/keyed.toml" <<EOF
approval_timeout = "2s"
shutdown_grace = "1s"

[[tenants]]
name = "fuzz"
keys_env = ["AGENT_ADAPTOR_API_FUZZ_KEY"]
EOF

stores=("sqlite://$work/fuzz.db")
modes=(dev keyed)
if [ "$ci" = 1 ]; then
  modes=(dev)
elif [ -n "${DATABASE_URL:-}" ] && command -v psql >/dev/null 2>&1; then
  pg_db="aa_api_fuzz_$$"
  psql "$DATABASE_URL" -q -c "CREATE DATABASE \"$pg_db\"" >/dev/null
  stores+=("${DATABASE_URL%/*}/$pg_db")
else
  echo "SKIPPED: api-fuzz on Postgres (no DATABASE_URL or no psql)" >&2
fi

failed=0
for store in "${stores[@]}"; do
  for mode in "${modes[@]}"; do
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    AGENT_ADAPTOR_API_FUZZ_KEY="$key" "$bin" serve --config "$work/$mode.toml" --bind "127.0.0.1:$port" \
      --store "$store" --no-discover --reference-chunk-delay-ms 0 >"$work/serve.out" 2>"$work/serve-$mode.log" &
    serve_pid=$!
    for _ in $(seq 1 100); do
      grep -q "listening" "$work/serve.out" 2>/dev/null && break
      sleep 0.1
    done
    auth=()
    if [ "$mode" = keyed ]; then auth=(-H "Authorization: Bearer $key"); fi
    label="${store%%:*} $mode"
    echo "== schemathesis: $label (${secs}s)" >&2
    if ! "$venv/bin/schemathesis" run "http://127.0.0.1:$port/openapi.json" "${auth[@]}" \
      --checks all --exclude-checks positive_data_acceptance,ensure_resource_availability \
      --phases examples,coverage,fuzzing,stateful --max-time "$secs" --workers 2 --request-timeout 10 \
      --exclude-path-regex '/(runs/\{run_id\}|standby)/events$' --continue-on-failure \
      --no-color >"$work/st.log" 2>&1; then
      # schemathesis's own crashes (a "Runtime Error" in its generators, e.g. hypothesis' AST cache) are not
      # answers of the server: reported, not failed on. Any failure, or any other error (a connection the
      # server refused or dropped, a timeout), fails.
      errors="$(sed -n '/^Errors:/,/^$/p' "$work/st.log" | sed '1d;/^$/d')"
      if ! grep -q "== FAILURES ==" "$work/st.log" && [ -n "$errors" ] \
        && ! grep -qv "Runtime Error" <<<"$errors"; then
        echo "WARNING: schemathesis crashed internally ($label), no server finding:" >&2
        grep -E "^_{3,} |Runtime Error$|generated|Seed" "$work/st.log" | sed "s/^/  [$label] /" >&2 || true
      else
        echo "FAILED: schemathesis found problems ($label):" >&2
        cat "$work/st.log" >&2
        failed=1
      fi
    else
      grep -E "generated|passed|Seed" "$work/st.log" | sed "s/^/  [$label] /" >&2 || true
    fi
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
  done
done
exit "$failed"
