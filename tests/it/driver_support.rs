//! Helpers the driver tests (`claude_driver`, `codebuddy_driver`, `codex_driver`) share: draining a stream,
//! its text, and the failure and transport a run reported.

use agent_adaptor::driver::TranscriptKind;
use agent_adaptor::runtime::{Event, Payload, RunError, RunOutcome, RunResult, Stream};
use futures::StreamExt;

/// Drains a stream's events.
pub async fn drain(stream: &Stream) -> Vec<Event> {
    stream.events().collect().await
}

/// The concatenated assistant text deltas.
pub fn delta_text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::TextDelta(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

/// The run failure of `outcome` (panics on success).
pub fn run_error(outcome: &RunOutcome) -> &RunError {
    outcome
        .as_ref()
        .err()
        .and_then(|e| e.as_run())
        .unwrap_or_else(|| panic!("expected a run failure, got {outcome:?}"))
}

/// The driver's failure code of `outcome`.
pub fn code(outcome: &RunOutcome) -> String {
    run_error(outcome).details["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The `transport` the driver reported in the result metadata.
pub fn transport(outcome: &RunOutcome) -> String {
    let r = match outcome {
        Ok(r) => r.clone(),
        Err(e) => e.as_run().map(|e| e.result.clone()).unwrap(),
    };
    r.metadata.get("transport").cloned().unwrap_or_default()
}

/// Asserts that the CLI reported MCP server `name` as `connected` in its init transcript item.
pub fn assert_mcp_connected(result: &RunResult, name: &str) {
    let init = result
        .transcript()
        .into_iter()
        .find(|i| i.kind == TranscriptKind::Init)
        .expect("an init transcript item");
    let servers = init.data["mcp_servers"].as_array().cloned().unwrap_or_default();
    assert!(
        servers
            .iter()
            .any(|s| s["name"] == name && s["status"] == "connected"),
        "{name} not connected: {servers:?}"
    );
}

/// An inline skill whose description is a marker the request body can be searched for.
pub fn marked_skill(key: &str, marker: &str) -> agent_adaptor::vocab::SkillRef {
    agent_adaptor::vocab::SkillRef::inline(
        key,
        format!(
            "---\nname: {key}\ndescription: {marker} use this skill when asked about {key}\n---\n\nSay {marker}.\n"
        ),
    )
}

/// The overlays under the system temp dir whose name mentions `run_id`.
pub fn overlays_of(run_id: &str) -> Vec<std::path::PathBuf> {
    let dir = std::env::temp_dir().join("agent-adaptor-skill-overlays");
    let tag = agent_adaptor::driver::file_label(run_id);
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().contains(&tag))
                .collect()
        })
        .unwrap_or_default()
}
