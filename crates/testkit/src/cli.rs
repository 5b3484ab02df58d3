//! Locating the real CLI binaries for end-to-end tests, and skipping loudly when one is absent.
//!
//! `scripts/install-clis.sh` installs the pinned CLIs into `.tools/npm`; `.ci/run` exports the
//! `AGENT_ADAPTOR_*_BIN` variables it prints. Tests call [`find`] and, when it returns `None`,
//! print why the tier is skipped (see [`skip_reason`]) instead of passing silently.

use std::path::{Path, PathBuf};

/// The real CLIs the test suite can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    /// `@anthropic-ai/claude-code@2.1.332`, native binary.
    Claude,
    /// `@openai/codex@0.171.0`, native binary.
    Codex,
    /// The CodeBuddy Code CLI inside `@tencent-ai/agent-sdk@0.3.201`.
    CodeBuddy,
    /// The ACP adapter `@agentclientprotocol/claude-agent-acp@0.101.0` (its `dist/index.js`, run by
    /// `node`; pointed at [`Cli::Claude`] through `CLAUDE_CODE_EXECUTABLE`).
    ClaudeAcp,
    /// The ACP adapter `@agentclientprotocol/codex-acp@2.6.0` (its `dist/index.js`, run by `node`;
    /// pointed at [`Cli::Codex`] through `CODEX_PATH`).
    CodexAcp,
}

impl Cli {
    /// The environment variable that names the binary.
    pub fn env_var(self) -> &'static str {
        match self {
            Cli::Claude => "AGENT_ADAPTOR_CLAUDE_BIN",
            Cli::Codex => "AGENT_ADAPTOR_CODEX_BIN",
            Cli::CodeBuddy => "AGENT_ADAPTOR_CODEBUDDY_BIN",
            Cli::ClaudeAcp => "AGENT_ADAPTOR_CLAUDE_ACP_JS",
            Cli::CodexAcp => "AGENT_ADAPTOR_CODEX_ACP_JS",
        }
    }

    /// Where `scripts/install-clis.sh` puts the binary, relative to the repository root.
    pub fn install_path(self) -> &'static str {
        match self {
            Cli::Claude => ".tools/npm/node_modules/@anthropic-ai/claude-code-linux-x64/claude",
            Cli::Codex => {
                ".tools/npm/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
            }
            Cli::CodeBuddy => ".tools/npm/node_modules/@tencent-ai/agent-sdk/cli/bin/codebuddy",
            Cli::ClaudeAcp => {
                ".tools/npm-acp/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
            }
            Cli::CodexAcp => ".tools/npm-acp/node_modules/@agentclientprotocol/codex-acp/dist/index.js",
        }
    }
}

/// Finds the binary: the env var first, then the install location under the repository root.
pub fn find(cli: Cli) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(cli.env_var()) {
        let p = PathBuf::from(p);
        return p.exists().then_some(p);
    }
    let p = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(cli.install_path());
    p.exists().then_some(p)
}

/// The message a test prints when it skips because the binary is absent.
pub fn skip_reason(cli: Cli) -> String {
    format!(
        "SKIPPED: {cli:?} CLI not found (set {} or run scripts/install-clis.sh); .ci/run installs it so this tier runs there",
        cli.env_var()
    )
}

/// Set by `.ci/run`: a missing CLI is then a failure, not a skip.
pub const REQUIRE_ENV: &str = "AGENT_ADAPTOR_REQUIRE_CLIS";

/// Returns the binary or prints the loud skip line and returns `None`; use as
/// `let Some(bin) = require(Cli::Claude) else { return };`.
///
/// # Panics
/// When the binary is absent and `AGENT_ADAPTOR_REQUIRE_CLIS=1` is set (as in CI), so a broken
/// install cannot turn the real-CLI tier into a silent skip.
pub fn require(cli: Cli) -> Option<PathBuf> {
    let found = find(cli);
    if found.is_none() {
        assert!(
            std::env::var(REQUIRE_ENV).as_deref() != Ok("1"),
            "{REQUIRE_ENV}=1 but {cli:?} is missing: {}",
            skip_reason(cli)
        );
        eprintln!("{}", skip_reason(cli));
    }
    found
}
