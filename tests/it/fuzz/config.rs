//! Fuzz target for the server's config file (`server::file`): the documented example
//! (`examples/serve.toml`) mutated as a document (values replaced by arbitrary ones built from its own
//! keys and strings, keys removed and added) and as text (truncated, bytes inserted or flipped), then
//! parsed, applied over the built-in defaults, and its agents built as `serve` and `agents` build them.
//! Nothing may panic; a refused file is a `ConfigError` (or the agent builder's error) with a message.

use std::path::Path;
use std::sync::Arc;

use agent_adaptor::server::{AgentSpec, FileConfig, ServerConfig, build_agents};
use agent_adaptor::store::memory::MemoryStore;
use proptest::prelude::*;
use serde_json::Value;

use super::{Damage, Mutation, damage, fuzz, mutate, mutations, vocabulary};

/// TOML has no `null`: nulls become empty strings, so the document stays serializable.
fn tomlish(v: Value) -> Value {
    match v {
        Value::Null => Value::String(String::new()),
        Value::Array(a) => Value::Array(a.into_iter().map(tomlish).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, tomlish(v))).collect()),
        other => other,
    }
}

#[test]
fn fuzz_config_file_parse_apply_and_build() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/serve.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let example: Value = serde_json::to_value(toml::from_str::<toml::Table>(&text).unwrap()).unwrap();
    let mut vocab = vocabulary([&example]);
    vocab.extend(
        [
            "0s",
            "1ms",
            "18446744073709551615s",
            "9999999999d",
            "-1s",
            "1.5s",
            "s",
            "",
            "memory",
            "sqlite://",
            "postgres://",
            "refuse",
            "supplement",
            "json",
            "text",
            "reference",
            "claude",
            "codex",
            "codebuddy",
            "cursor",
            "git_worktree",
            "dir",
            "archive",
            "http",
            "sse",
            "stdio",
            "127.0.0.1:0",
            "*",
            "::/0",
            "10.0.0.0/33",
        ]
        .map(String::from),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let strategy = (mutations(&vocab), damage(), any::<bool>());
    fuzz(
        "config",
        strategy,
        |(muts, dmg, keys): (Vec<Mutation>, Option<Damage>, bool)| {
            let doc = tomlish(mutate(example.clone(), &muts));
            let text = match serde_json::from_value::<toml::Value>(doc).map(|v| toml::to_string(&v)) {
                Ok(Ok(t)) => t,
                _ => text.clone(),
            };
            let bytes = super::mutate_line(&text, &[], &dmg);
            let text = String::from_utf8_lossy(&bytes);
            let file = match FileConfig::parse(&text, Path::new("fuzz.toml")) {
                Ok(f) => f,
                Err(e) => {
                    prop_assert!(!e.to_string().is_empty());
                    return Ok(());
                }
            };
            let base = ServerConfig {
                agents: vec![AgentSpec::new("reference", "reference")],
                ..ServerConfig::default()
            };
            let env = |var: &str| keys.then(|| format!("key-of-{var}"));
            let config = match file.apply(base, env) {
                Ok(c) => c,
                Err(e) => {
                    prop_assert!(!e.to_string().is_empty());
                    return Ok(());
                }
            };
            if let Err(e) = build_agents(&config, Arc::new(MemoryStore::new())) {
                prop_assert!(!e.to_string().is_empty());
            }
            Ok(())
        },
    );
}
