//! Host tools: the Agent-owned loopback MCP server spoken to directly over HTTP (`server.rs`) and the
//! Agent's launch checks (`agent.rs`).

mod agent;
mod server;

use agent_adaptor::tools::{Tool, define, reject};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The weather tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct City {
    /// The city.
    pub city: String,
}

/// The weather tool's output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Weather {
    /// Degrees Celsius.
    pub celsius: i32,
    /// A marker the tests look for in the model's request log.
    pub marker: String,
}

/// A tool that answers for Paris, rejects Atlantis and fails internally (with a secret) for Mordor.
pub fn weather() -> Tool {
    define("weather", "The weather in a city", |c: City| async move {
        match c.city.as_str() {
            "Atlantis" => Err(reject("not_found", "Atlantis is not on any map")),
            "Mordor" => Err(agent_adaptor::tools::ToolError::internal(
                "db password hunter2 rejected",
            )),
            "Panic" => panic!("secret panic detail"),
            _ => Ok(Weather {
                celsius: 21,
                marker: format!("WEATHER-OK-{}", c.city),
            }),
        }
    })
    .read_only()
    .idempotent()
    .revision("1")
}
