#!/usr/bin/env bash
# acplint (PyPI, pinned, in a venv under target/) against `agent-adaptor acp --agent reference`: every
# category it has. acplint 0.1.0 sends a few requests outside the ACP v1 schema (protocolVersion as a
# string, `content` instead of `prompt`); the checks that fail for that reason are listed, with the reason,
# in tests/acplint/known-failures.txt. Fails when any other check fails, or when acplint runs no check.
# A listed check that passes is reported (the list can shrink) but does not fail the run.
#
#   scripts/acplint.sh                          # builds the binary
#   AGENT_ADAPTOR_BIN=... scripts/acplint.sh    # reuses a built binary
#
# Prints "SKIPPED: <why>" and exits 0 only when python3 is missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIPPED: acplint (python3 not installed)"
  exit 0
fi

target="${CARGO_TARGET_DIR:-$root/target}"
venv="$target/acplint/venv"
version="0.1.0"
if [ ! -x "$venv/bin/acplint" ] || ! "$venv/bin/acplint" --version 2>/dev/null | grep -q "$version"; then
  echo "== installing acplint $version into target/acplint/venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "acplint==$version"
fi

if [ -z "${AGENT_ADAPTOR_BIN:-}" ]; then
  echo "== building agent-adaptor" >&2
  cargo build --quiet --bin agent-adaptor
  AGENT_ADAPTOR_BIN="$target/debug/agent-adaptor"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "== acplint $version against agent-adaptor acp --agent reference"
# acplint exits non-zero whenever a check fails; the comparison below decides.
(cd "$work" && "$venv/bin/acplint" --agent "$AGENT_ADAPTOR_BIN" --agent-args "acp --agent reference" \
  --cwd "$work" --timeout 20 --output json --output-file "$work/report.json" >"$work/acplint.log" 2>&1) || true
if [ ! -s "$work/report.json" ]; then
  echo "acplint wrote no report:" >&2
  cat "$work/acplint.log" >&2
  exit 1
fi

"$venv/bin/python" - "$work/report.json" "$root/tests/acplint/known-failures.txt" <<'PY'
import json
import sys

report = json.load(open(sys.argv[1]))
known = {
    line.strip()
    for line in open(sys.argv[2])
    if line.strip() and not line.lstrip().startswith("#")
}
results = report.get("results", [])
if not results:
    print("acplint ran no check", file=sys.stderr)
    sys.exit(1)
failed = {f"{r['category']}/{r['name']}": r for r in results if r["status"] != "PASS"}
passed = len(results) - len(failed)
print(f"acplint: {passed}/{len(results)} checks passed, {len(failed)} failed ({len(set(failed) & known)} known)")
new = sorted(set(failed) - known)
for name in new:
    print(f"NEW FAILURE {name}: {failed[name]['status']}: {failed[name]['message']}", file=sys.stderr)
for name in sorted(known - set(failed)):
    print(f"known failure now passes (remove it from tests/acplint/known-failures.txt): {name}")
sys.exit(1 if new else 0)
PY
