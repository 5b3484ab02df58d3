//! The agents the command line offers: exactly the ones `serve` would offer with the same `--config`
//! file (its `agents`, the built-in `reference` agent, and one agent per provider whose CLI is found),
//! built through the library's provider registry by the server's own agent builder.

use std::path::Path;
use std::sync::Arc;

use agent_adaptor::providers::registry;
use agent_adaptor::server::{AgentSpec, Agents, FileConfig, ServerConfig, build_agents};
use agent_adaptor::store::memory::MemoryStore;

/// The built-in defaults, then the `--config` file (the same reading as `serve`'s), with the file's
/// `store` (which `serve` resolves against its flags).
pub fn load(file: Option<&Path>) -> Result<(ServerConfig, Option<String>), String> {
    let mut config = ServerConfig {
        agents: vec![AgentSpec::new("reference", "reference")],
        ..ServerConfig::default()
    };
    let mut store = None;
    if let Some(path) = file {
        let file = FileConfig::load(path).map_err(|e| e.to_string())?;
        store = file.store.clone();
        config = file
            .apply(config, |var| std::env::var(var).ok())
            .map_err(|e| e.to_string())?;
    }
    Ok((config, store))
}

/// [`load`] without the store.
pub fn base_config(file: Option<&Path>) -> Result<ServerConfig, String> {
    load(file).map(|(c, _)| c)
}

/// Every agent `config` offers, built over a memory store (`run` keeps no threads).
pub fn offered(config: &ServerConfig) -> Result<Agents, String> {
    build_agents(config, Arc::new(MemoryStore::new())).map_err(|e| e.to_string())
}

/// `agent-adaptor agents`: one line per offered agent (name, provider, binary), then the providers whose
/// CLI was not found and how to point at one.
pub fn list(config: &ServerConfig) -> Result<Vec<String>, String> {
    let agents = offered(config)?;
    let mut lines: Vec<String> = agents
        .iter()
        .map(|a| {
            let detail = match registry::provider(&a.provider) {
                Some(p) => {
                    let configured = config
                        .agents
                        .iter()
                        .find(|s| s.name == a.name)
                        .and_then(|s| s.config.get("command"))
                        .and_then(|c| c.as_str())
                        .map(str::to_owned);
                    let bin = configured.or_else(|| p.locate().map(|b| b.display().to_string()));
                    format!(
                        "{} ({})",
                        p.description,
                        bin.unwrap_or_else(|| p.command.to_owned())
                    )
                }
                None if a.provider == registry::REFERENCE => {
                    "built-in in-memory agent (no CLI needed)".into()
                }
                None => a.provider.clone(),
            };
            format!("{:<12} {:<10} {detail}", a.name, a.provider)
        })
        .collect();
    for p in registry::PROVIDERS {
        if agents.iter().all(|a| a.provider != p.name) {
            lines.push(format!(
                "{:<12} {:<10} not found: put `{}` on PATH or set {}",
                "-", p.name, p.command, p.env_var
            ));
        }
    }
    Ok(lines)
}
