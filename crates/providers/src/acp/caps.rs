//! What an ACP agent declared in `initialize` ([`AgentCaps`]) and the Descriptor it makes (pure): only
//! what the agent declared *and* this driver implements.
//!
//! | declared by the agent | Descriptor |
//! |---|---|
//! | `sessionCapabilities.resume` or `loadSession` | `sessions.resume` (`session/resume` preferred: no history replay) |
//! | `sessionCapabilities.fork` | `sessions.fork` (`session/fork`) |
//! | `mcpCapabilities.http` / `.sse` | `mcp.http` / `mcp.sse` (stdio is mandatory in ACP) |
//! | always | permission Ask / AutoApprove / AutoDeny and Retry (a `session/request_permission` stays open while the host decides), token-level text, reasoning, HITL, turn-end input delivered by a new `session/prompt` in the same process, exact-JSON structured output |

use serde::{Deserialize, Serialize};

use crate::driver::messages::Boundary;
use crate::driver::{
    ContinueMode, DecisionMode, Descriptor, McpCaps, MessageCaps, ProcessCaps, RunPolicyCaps, SessionCaps,
    SkillCaps, StreamCaps, StructuredCaps,
};
use agent_adaptor_core::acp::wire::InitializeResponse;

/// The capabilities an agent declared, reduced to what this driver uses.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AgentCaps {
    /// The agent's name (`agentInfo.name`).
    pub name: String,
    /// Its display title (`agentInfo.title`).
    pub title: String,
    /// Its version.
    pub version: String,
    /// `loadSession`.
    pub load: bool,
    /// `sessionCapabilities.resume`.
    pub resume: bool,
    /// `sessionCapabilities.fork`.
    pub fork: bool,
    /// `sessionCapabilities.list`.
    pub list: bool,
    /// `mcpCapabilities.http`.
    pub mcp_http: bool,
    /// `mcpCapabilities.sse`.
    pub mcp_sse: bool,
    /// `promptCapabilities.image`.
    pub image: bool,
    /// `promptCapabilities.embeddedContext`.
    pub embedded_context: bool,
    /// The `authMethods` ids.
    pub auth_methods: Vec<String>,
}

impl AgentCaps {
    /// The capabilities of an `initialize` answer.
    pub fn from_initialize(r: &InitializeResponse) -> AgentCaps {
        let a = &r.agent_capabilities;
        AgentCaps {
            name: r.agent_info.name.clone(),
            title: r.agent_info.title.clone(),
            version: r.agent_info.version.clone(),
            load: a.load_session,
            resume: a.session_capabilities.resume.is_some(),
            fork: a.session_capabilities.fork.is_some(),
            list: a.session_capabilities.list.is_some(),
            mcp_http: a.mcp_capabilities.http,
            mcp_sse: a.mcp_capabilities.sse,
            image: a.prompt_capabilities.image,
            embedded_context: a.prompt_capabilities.embedded_context,
            auth_methods: r
                .auth_methods
                .iter()
                .filter_map(|m| m.get("id").and_then(serde_json::Value::as_str))
                .map(str::to_owned)
                .collect(),
        }
    }

    /// A session can be continued in a new process (`session/resume` or `session/load`).
    pub fn resumable(&self) -> bool {
        self.resume || self.load
    }
}

/// The descriptor of an agent with `caps`, typed `driver_type`, shown as `display_name`.
pub fn descriptor(driver_type: &str, display_name: &str, caps: &AgentCaps) -> Descriptor {
    let all = vec![
        DecisionMode::Ask,
        DecisionMode::AutoApprove,
        DecisionMode::AutoDeny,
    ];
    let resumable = caps.resumable();
    Descriptor {
        driver_type: driver_type.into(),
        display_name: display_name.into(),
        sessions: SessionCaps {
            resume: resumable,
            fork: caps.fork,
        },
        run_policy: RunPolicyCaps {
            permission: all,
            retry: true,
            ..Default::default()
        },
        messages: MessageCaps {
            boundaries: vec![Boundary::TurnEnd],
            interrupt: false,
            continue_mode: ContinueMode::InRun,
            max_units: 0,
            unit: "bytes".into(),
            confirmed_delivery: false,
            persists_delivered: resumable,
            min_version: None,
        },
        structured: StructuredCaps {
            native: false,
            prompt_validate: true,
            native_with_hitl: false,
        },
        stream: StreamCaps {
            token_level: true,
            reasoning: true,
            tool_call_args: false,
            hitl: true,
        },
        process: ProcessCaps { persistent: false },
        mcp: McpCaps {
            stdio: true,
            http: caps.mcp_http,
            sse: caps.mcp_sse,
        },
        skills: SkillCaps { supported: false },
        system_prompt_append: false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn caps(v: serde_json::Value) -> AgentCaps {
        AgentCaps::from_initialize(&serde_json::from_value(v).unwrap())
    }

    #[test]
    fn the_descriptor_declares_only_what_the_agent_declared() {
        let bare = caps(json!({"protocolVersion": 1}));
        let d = descriptor("acp", "Bare", &bare);
        assert!(!d.sessions.resume && !d.sessions.fork);
        assert!(d.mcp.stdio && !d.mcp.http && !d.mcp.sse);
        assert!(!d.messages.persists_delivered);
        let rich = caps(
            json!({"protocolVersion": 1, "agentInfo": {"name": "x", "title": "X", "version": "1"},
            "agentCapabilities": {"loadSession": true, "mcpCapabilities": {"http": true},
                "sessionCapabilities": {"fork": {}}},
            "authMethods": [{"id": "cursor_login", "name": "Login"}, {"name": "no id"}]}),
        );
        assert!(rich.load && !rich.resume && rich.fork);
        assert_eq!(rich.auth_methods, ["cursor_login"]);
        let d = descriptor("acp", "X", &rich);
        assert!(d.sessions.resume && d.sessions.fork && d.mcp.http);
        assert_eq!(d.messages.continue_mode, ContinueMode::InRun);
        assert!(d.run_policy.permission.contains(&DecisionMode::Ask) && d.stream.hitl);
        assert_eq!(d, descriptor("acp", "X", &rich), "deterministic");
    }
}
