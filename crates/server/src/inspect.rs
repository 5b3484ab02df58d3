//! `GET /v1/agents/{agent}/inspect`: the agent's inspection report through the library
//! [`Inspector`](crate::runtime::Inspector) (environment checks, models, quota, configuration schema,
//! skills, profile state). The probes run concurrently, each under the inspect timeout (`?timeout_ms=`,
//! default [`DEFAULT_TIMEOUT`], at most [`MAX_TIMEOUT`]); a probe that does not answer is `null` in the
//! report and listed in `errors` with `unavailable`, `failed` or `timeout`. Inspection never starts a model
//! task.
//!
//! No server path reaches the body: skill error messages are reduced to their codes, the profile's dir
//! and source fields are removed (also from its selection), and free text — profile and resource
//! warnings and errors, environment check messages, probe error messages — is made path-free
//! ([`path_free`]). The library keeps its full texts.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;

use super::extract::{Path, Query};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AppState;
use super::error::ApiError;
use super::paths::path_free;
use super::rest::find_agent;
use super::views::{InspectView, ProbeError};
use crate::driver::{EnvironmentReport, InspectError};
use crate::profile::ProfileSnapshot;
use crate::runtime::SkillReport;

/// The inspect timeout when the request names none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest inspect timeout a request may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(60);

/// `?timeout_ms=` of the inspect route.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InspectQuery {
    /// Per-probe timeout in milliseconds (1 to 60000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Runs one probe under `timeout`: its JSON, or why it did not answer.
async fn probe<T: Serialize>(
    name: &str,
    timeout: Duration,
    fut: impl Future<Output = Result<T, InspectError>>,
) -> Result<Value, ProbeError> {
    let err = |code: &str, message: String| ProbeError {
        probe: name.to_owned(),
        code: code.to_owned(),
        message: path_free(&message, &[]),
    };
    match tokio::time::timeout(timeout, fut).await {
        Err(_) => Err(err(
            "timeout",
            format!("no answer within {} ms", timeout.as_millis()),
        )),
        Ok(Err(e @ InspectError::Unavailable { .. })) => Err(err("unavailable", e.to_string())),
        Ok(Err(e @ InspectError::Failed { .. })) => Err(err("failed", e.to_string())),
        Ok(Ok(v)) => serde_json::to_value(v).map_err(|e| err("failed", e.to_string())),
    }
}

/// `GET /v1/agents/{agent}/inspect`.
#[utoipa::path(get, path = "/v1/agents/{agent}/inspect", tag = "agents", params(("agent" = String, Path, description = "The agent name"), ("timeout_ms" = Option<u64>, Query, minimum = 1, maximum = 60000, description = "Per-probe timeout in milliseconds, 1 to 60000 (default 10000); outside the range 422 `invalid_request`")), responses((status = 200, description = "The inspection report; probes that did not answer are null and listed in `errors`", body = InspectView), (status = 404, description = "Unknown agent", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: bad timeout", body = crate::views::ErrorBody)))]
pub async fn inspect(
    State(state): State<Arc<AppState>>,
    Path(agent): Path<String>,
    Query(q): Query<InspectQuery>,
) -> Result<Json<InspectView>, ApiError> {
    let a = find_agent(&state, &agent)?;
    let timeout = match q.timeout_ms {
        None => DEFAULT_TIMEOUT,
        Some(ms) if ms >= 1 && Duration::from_millis(ms) <= MAX_TIMEOUT => Duration::from_millis(ms),
        Some(_) => return Err(ApiError::invalid("timeout_ms", "expected 1 to 60000")),
    };
    let inspector = a.agent.inspect();
    let (environment, models, quota, config_schema, skills, profile) = tokio::join!(
        probe("environment", timeout, async {
            inspector.environment().await.map(environment_without_paths)
        }),
        probe("models", timeout, inspector.models()),
        probe("quota", timeout, inspector.quota()),
        probe("config_schema", timeout, inspector.config_schema()),
        probe("skills", timeout, async {
            inspector.skills().await.map(SkillReport::without_messages)
        }),
        probe("profile", timeout, async {
            inspector.profile().await.map(without_paths)
        }),
    );
    let mut errors = Vec::new();
    let mut keep = |r: Result<Value, ProbeError>| r.map_err(|e| errors.push(e)).ok();
    Ok(Json(InspectView {
        agent: a.name.clone(),
        provider: a.provider.clone(),
        environment: keep(environment),
        models: keep(models),
        quota: keep(quota),
        config_schema: keep(config_schema),
        skills: keep(skills),
        profile: keep(profile),
        errors,
    }))
}

/// The environment report with path-free check messages.
fn environment_without_paths(mut report: EnvironmentReport) -> EnvironmentReport {
    for c in &mut report.checks {
        c.message = path_free(&c.message, &[]);
    }
    report
}

/// The profile snapshot as JSON without the server's paths: the dir and a clone's source (of the
/// profile and of its selection) removed, warnings and errors path-free.
fn without_paths(mut snapshot: ProfileSnapshot) -> Value {
    let p = &snapshot.profile;
    let mut known = vec![("<profile dir>", p.dir.clone())];
    known.extend(p.source.clone().map(|s| ("<profile source>", s)));
    let known: Vec<(&str, &std::path::Path)> = known.iter().map(|(l, p)| (*l, p.as_path())).collect();
    let scrub = |t: &mut String| *t = path_free(t, &known);
    snapshot.warnings.iter_mut().for_each(scrub);
    for r in &mut snapshot.resources {
        r.warnings.iter_mut().for_each(scrub);
        scrub(&mut r.error);
    }
    let mut v = serde_json::to_value(snapshot).unwrap_or(Value::Null);
    if let Some(p) = v.get_mut("profile").and_then(Value::as_object_mut) {
        p.remove("dir");
        p.remove("source");
        if let Some(sel) = p.get_mut("selection").and_then(Value::as_object_mut) {
            sel.remove("dir");
            sel.remove("source");
            if let Some(o) = sel.get_mut("options").and_then(Value::as_object_mut) {
                o.remove("dir");
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{CloneOptions, Selection};
    use crate::providers::claude::{ClaudeDriver, Config};
    use crate::runtime::Agent;

    #[tokio::test]
    async fn clone_warnings_and_selection_paths_leave_the_view_while_the_library_keeps_them() {
        let root = tempfile::tempdir().unwrap();
        let source = root.path().join("source");
        std::fs::create_dir_all(&source).unwrap();
        let clone = root.path().join("clone");
        let options = CloneOptions::new().copy_settings().copy_skills().in_dir(&clone);
        let agent = Agent::builder(ClaudeDriver::new(Config::default()))
            .profile(Selection::clone_from(&source, options))
            .build();
        // Preparing the clone warns about what the source lacks, naming the files.
        let snapshot = agent.sync_profile().await.unwrap();
        let root = root.path().to_string_lossy().into_owned();
        assert!(
            snapshot.warnings.iter().any(|w| w.contains(&root)),
            "the library keeps the paths: {:?}",
            snapshot.warnings
        );
        let view = without_paths(snapshot);
        let text = view.to_string();
        assert!(!text.contains(&root), "{text}");
        let warnings: Vec<&str> = view["warnings"]
            .as_array()
            .expect("the warnings")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            warnings.contains(&"no skills to copy in <profile source>")
                && warnings.contains(&"nothing to copy at <profile source>/settings.json"),
            "{warnings:?}"
        );
        let selection = &view["profile"]["selection"];
        assert_eq!(selection["kind"], "clone_from", "{view}");
        assert_eq!(selection["options"]["copy_skills"], true, "{view}");
        assert!(selection.get("source").is_none() && selection["options"].get("dir").is_none());
    }
}
