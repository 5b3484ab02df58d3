//! The agents the command line knows how to build.

use agent_adaptor::runtime::Agent;
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};

/// A named agent.
pub struct AgentInfo {
    /// Name used on the command line.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
}

/// Every agent available on this machine.
pub fn available() -> Vec<AgentInfo> {
    vec![AgentInfo {
        name: "reference",
        description: "built-in in-memory agent (no CLI needed)",
    }]
}

/// Builds the agent called `name`.
pub fn build(name: &str, model: Option<&str>) -> Result<Agent, String> {
    match name {
        "reference" => {
            let mut builder = Agent::builder(ReferenceDriver::new(ReferenceConfig {
                chunk_delay: std::time::Duration::from_millis(15),
                ..Default::default()
            }));
            if let Some(m) = model {
                builder = builder.model(m);
            }
            Ok(builder.build())
        }
        other => {
            let names: Vec<_> = available().iter().map(|a| a.name).collect();
            Err(format!(
                "unknown agent {other:?}; available: {}",
                names.join(", ")
            ))
        }
    }
}
