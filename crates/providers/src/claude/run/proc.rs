//! One Claude Code process: the shared stream-json [`Proc`](stream_json::proc::Proc) over Claude Code's input
//! frames, and which inherited variables reach it.

use crate::stream_json;
use crate::stream_json::proc::in_base_allowlist;

use super::super::env;
use super::super::wire::InputFrame;

pub use stream_json::proc::Launch;

/// A running Claude Code CLI.
pub type Proc = stream_json::proc::Proc<InputFrame>;

impl stream_json::proc::InputFrame for InputFrame {
    fn interrupt(request_id: &str) -> InputFrame {
        InputFrame::interrupt(request_id)
    }
}

/// The variables a Claude Code process inherits: its own (see `env::inherits`) and the base allowlist.
pub fn base_or_claude(name: &str) -> bool {
    env::inherits(name) || in_base_allowlist(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inheritance_keeps_claude_anthropic_and_base_variables_only() {
        for ok in [
            "PATH",
            "HOME",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "CLAUDE_CODE_MAX_RETRIES",
        ] {
            assert!(base_or_claude(ok), "{ok}");
        }
        for no in [
            "CLAUDE_CONFIG_DIR",
            "OPENAI_API_KEY",
            "HTTP_PROXY",
            "CODEBUDDY_API_KEY",
        ] {
            assert!(!base_or_claude(no), "{no}");
        }
    }
}
