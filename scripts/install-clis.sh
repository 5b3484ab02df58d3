#!/usr/bin/env bash
# Install the real coding-agent CLIs that the end-to-end tests drive, pinned, into .tools/npm (git-ignored),
# and the ACP adapters for Claude Code and Codex into .tools/npm-acp.
# Prints the env lines that point the tests at the binaries. Idempotent: a second run is a no-op.
#
#   scripts/install-clis.sh            # install all
#   eval "$(scripts/install-clis.sh --env)"   # export AGENT_ADAPTOR_{CLAUDE,CODEX,CODEBUDDY}_BIN,
#                                             # AGENT_ADAPTOR_{CLAUDE,CODEX}_ACP_JS
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="$root/.tools/npm"
claude_pkg="@anthropic-ai/claude-code@2.1.332"
codex_pkg="@openai/codex@0.171.0"
codebuddy_pkg="@tencent-ai/agent-sdk@0.3.201"
# The ACP adapters (npm view <pkg> versions, 2026-12-05: newest 0.101.0 and 2.6.0). They go into their own
# prefix with --omit=optional: their optional dependencies are the adapters' own copies of the native CLIs
# (claude-agent-sdk-linux-x64, @openai/codex 0.166's platform package, ~700 MB together), which the tests
# never run: CLAUDE_CODE_EXECUTABLE and CODEX_PATH point the adapters at the pinned binaries above. A
# separate prefix, because --omit=optional in .tools/npm would remove the pinned CLIs' own native packages.
acp_prefix="$root/.tools/npm-acp"
claude_acp_pkg="@agentclientprotocol/claude-agent-acp@0.101.0"
codex_acp_pkg="@agentclientprotocol/codex-acp@2.6.0"

claude_bin="$prefix/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
codex_bin="$prefix/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
codebuddy_bin="$prefix/node_modules/@tencent-ai/agent-sdk/cli/bin/codebuddy"
claude_acp_js="$acp_prefix/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
codex_acp_js="$acp_prefix/node_modules/@agentclientprotocol/codex-acp/dist/index.js"

print_env() {
  [ -x "$claude_bin" ] && echo "export AGENT_ADAPTOR_CLAUDE_BIN='$claude_bin'"
  [ -x "$codex_bin" ] && echo "export AGENT_ADAPTOR_CODEX_BIN='$codex_bin'"
  [ -e "$codebuddy_bin" ] && echo "export AGENT_ADAPTOR_CODEBUDDY_BIN='$codebuddy_bin'"
  [ -e "$claude_acp_js" ] && echo "export AGENT_ADAPTOR_CLAUDE_ACP_JS='$claude_acp_js'"
  [ -e "$codex_acp_js" ] && echo "export AGENT_ADAPTOR_CODEX_ACP_JS='$codex_acp_js'"
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
if [ -e "$claude_acp_js" ] && [ -e "$codex_acp_js" ]; then
  echo "ACP adapters already installed in $acp_prefix" >&2
else
  mkdir -p "$acp_prefix"
  # Both declare engines node>=22; on node 20 npm warns (EBADENGINE) and they run (checked: initialize,
  # session/new, prompts, permissions, cancel, load).
  npm install --prefix "$acp_prefix" --no-audit --no-fund --loglevel=error --omit=optional \
    "$claude_acp_pkg" "$codex_acp_pkg" >&2
fi
for b in "$claude_bin" "$codex_bin" "$codebuddy_bin" "$claude_acp_js" "$codex_acp_js"; do
  [ -e "$b" ] || { echo "missing after install: $b" >&2; exit 1; }
done
print_env
