#!/usr/bin/env bash
# Install the real coding-agent CLIs that the end-to-end tests drive, pinned, into .tools/npm (git-ignored).
# Prints the env lines that point the tests at the binaries. Idempotent: a second run is a no-op.
#
#   scripts/install-clis.sh            # install all
#   eval "$(scripts/install-clis.sh --env)"   # export AGENT_ADAPTOR_{CLAUDE,CODEX,CODEBUDDY}_BIN
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="$root/.tools/npm"
claude_pkg="@anthropic-ai/claude-code@2.1.332"
codex_pkg="@openai/codex@0.171.0"
codebuddy_pkg="@tencent-ai/agent-sdk@0.3.201"

claude_bin="$prefix/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
codex_bin="$prefix/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
codebuddy_bin="$prefix/node_modules/@tencent-ai/agent-sdk/cli/bin/codebuddy"

print_env() {
  [ -x "$claude_bin" ] && echo "export AGENT_ADAPTOR_CLAUDE_BIN='$claude_bin'"
  [ -x "$codex_bin" ] && echo "export AGENT_ADAPTOR_CODEX_BIN='$codex_bin'"
  [ -e "$codebuddy_bin" ] && echo "export AGENT_ADAPTOR_CODEBUDDY_BIN='$codebuddy_bin'"
  return 0
}

if [ "${1:-}" = "--env" ]; then print_env; exit 0; fi

if [ -x "$claude_bin" ] && [ -x "$codex_bin" ] && [ -e "$codebuddy_bin" ]; then
  echo "CLIs already installed in $prefix" >&2
else
  mkdir -p "$prefix"
  # Claude Code 2.1.332 declares engines node>=22; on node 20 npm warns (EBADENGINE) and installs it anyway.
  # The CLI itself is a native binary, so the host node version does not matter at run time.
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "$claude_pkg" "$codex_pkg" "$codebuddy_pkg" >&2
fi
for b in "$claude_bin" "$codex_bin" "$codebuddy_bin"; do
  [ -e "$b" ] || { echo "missing after install: $b" >&2; exit 1; }
done
print_env
