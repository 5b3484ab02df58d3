//! `GET /v1/agents/{agent}/inspect`: the agent's inspection report through the library
//! [`Inspector`](crate::runtime::Inspector) (environment checks, models, quota, configuration schema,
//! skills, profile state; skill error messages and profile paths are left out). The probes run concurrently, each under the inspect timeout (`?timeout_ms=`,
//! default [`DEFAULT_TIMEOUT`], at most [`MAX_TIMEOUT`]); a probe that does not answer is `null` in the
//! report and listed in `errors` with `unavailable`, `failed` or `timeout`. Inspection never starts a model
//! task.

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
use super::rest::find_agent;
use super::views::{InspectView, ProbeError};
use crate::driver::InspectError;
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
        message,
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
#[utoipa::path(get, path = "/v1/agents/{agent}/inspect", tag = "agents", params(("agent" = String, Path, description = "The agent name"), ("timeout_ms" = Option<u64>, Query, description = "Per-probe timeout in milliseconds (default 10000, 1 to 60000)")), responses((status = 200, description = "The inspection report; probes that did not answer are null and listed in `errors`", body = InspectView), (status = 404, description = "Unknown agent", body = crate::server::views::ErrorBody), (status = 422, description = "invalid_request: bad timeout", body = crate::server::views::ErrorBody)))]
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
        probe("environment", timeout, inspector.environment()),
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

/// The profile snapshot as JSON without the server's paths (the profile dir and a clone's source).
fn without_paths(snapshot: ProfileSnapshot) -> Value {
    let mut v = serde_json::to_value(snapshot).unwrap_or(Value::Null);
    if let Some(p) = v.get_mut("profile").and_then(Value::as_object_mut) {
        p.remove("dir");
        p.remove("source");
    }
    v
}
