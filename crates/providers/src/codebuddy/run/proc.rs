//! One CodeBuddy process: the shared stream-json [`Proc`](stream_json::proc::Proc) over CodeBuddy's input
//! frames, and which inherited variables reach it.

use crate::stream_json;
use crate::stream_json::proc::in_base_allowlist;

use super::super::env;
use super::super::wire::InputFrame;

pub use stream_json::proc::Launch;

/// A running CodeBuddy CLI.
pub type Proc = stream_json::proc::Proc<InputFrame>;

impl stream_json::proc::InputFrame for InputFrame {
    fn interrupt(request_id: &str) -> InputFrame {
        InputFrame::interrupt(request_id)
    }
}

/// The variables a CodeBuddy process inherits: its own (see `env::inherits`) and the base allowlist.
pub fn base_or_codebuddy(name: &str) -> bool {
    env::inherits(name) || in_base_allowlist(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inheritance_keeps_codebuddy_and_base_variables_only() {
        for ok in [
            "PATH",
            "HOME",
            "LC_ALL",
            "CODEBUDDY_API_KEY",
            "CODEBUDDY_BASE_URL",
        ] {
            assert!(base_or_codebuddy(ok), "{ok}");
        }
        for no in [
            "CODEBUDDY_CONFIG_DIR",
            "OPENAI_API_KEY",
            "HTTP_PROXY",
            "ANTHROPIC_API_KEY",
        ] {
            assert!(!base_or_codebuddy(no), "{no}");
        }
    }
}
