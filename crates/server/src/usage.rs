//! `GET /v1/usage`: metered usage ([`super::metering`]) aggregated per tenant, agent and thread over a
//! time range, cursor-paged. A tenant's key reads its own usage; an operator tenant's key
//! (`admin = true` in `[[tenants]]`) reads every tenant's, or one tenant's with `?tenant=`. A tenant key
//! that names another tenant is 403 `forbidden`.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::AppState;
use super::auth::Tenant;
use super::error::{ApiError, ErrorCode};
use super::extract::Query;
use crate::store::{UsageKey, UsageQuery, UsageRow, UsageTotals};

/// Largest page of `GET /v1/usage`.
pub const MAX_USAGE_PAGE: u32 = 1000;

/// The query of `GET /v1/usage`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageParams {
    /// Runs that ended at or after this (RFC 3339).
    pub from: Option<DateTime<Utc>>,
    /// Runs that ended before this (RFC 3339).
    pub to: Option<DateTime<Utc>>,
    /// Only this agent.
    pub agent: Option<String>,
    /// Only this thread.
    pub thread_key: Option<String>,
    /// Only this tenant (an operator key; a tenant key may name only itself).
    pub tenant: Option<String>,
    /// The `next` of the previous page.
    pub after: Option<String>,
    /// Page size (default 100).
    pub limit: Option<u32>,
}

/// Sums of metered usage.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageTotalsView {
    /// Runs counted.
    pub runs: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens served from a cache.
    pub cached_input_tokens: u64,
    /// Estimated cost in US dollars.
    pub cost_usd: f64,
    /// CLI wall time in seconds.
    pub wall_seconds: f64,
    /// CPU time of the CLI processes in seconds.
    pub cpu_seconds: f64,
}

impl From<UsageTotals> for UsageTotalsView {
    fn from(t: UsageTotals) -> Self {
        UsageTotalsView {
            runs: t.runs,
            input_tokens: t.input_tokens,
            output_tokens: t.output_tokens,
            cached_input_tokens: t.cached_input_tokens,
            cost_usd: t.cost_micros as f64 / 1_000_000.0,
            wall_seconds: t.wall_ms as f64 / 1000.0,
            cpu_seconds: t.cpu_ms as f64 / 1000.0,
        }
    }
}

/// One tenant, agent and thread's usage.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageRowView {
    /// The tenant.
    pub tenant: String,
    /// The agent.
    pub agent: String,
    /// The thread key (`null`: runs without a thread).
    pub thread_key: Option<String>,
    /// Runs counted.
    pub runs: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens served from a cache.
    pub cached_input_tokens: u64,
    /// Estimated cost in US dollars.
    pub cost_usd: f64,
    /// CLI wall time in seconds.
    pub wall_seconds: f64,
    /// CPU time of the CLI processes in seconds.
    pub cpu_seconds: f64,
    /// The earliest run end in the row.
    pub first_at: DateTime<Utc>,
    /// The latest run end in the row.
    pub last_at: DateTime<Utc>,
}

/// `GET /v1/usage`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageList {
    /// The rows, by tenant, agent and thread key.
    pub usage: Vec<UsageRowView>,
    /// The sums of this page's rows.
    pub totals: UsageTotalsView,
    /// The `after` of the next page, when there may be one.
    pub next: Option<String>,
}

/// The opaque cursor of a row key: hex of its JSON.
fn cursor(key: &UsageKey) -> String {
    hex::encode(serde_json::to_vec(&[&key.tenant, &key.agent, &key.thread_key]).unwrap_or_default())
}

fn parse_cursor(s: &str) -> Result<UsageKey, ApiError> {
    let bad = || ApiError::invalid("after", "not a cursor this service returned");
    let bytes = hex::decode(s).map_err(|_| bad())?;
    let [tenant, agent, thread_key]: [String; 3] = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    Ok(UsageKey {
        tenant,
        agent,
        thread_key,
    })
}

/// A row's view. The sums are spelled out rather than `#[serde(flatten)]`ed: a flattened closed schema becomes an
/// `allOf` of two closed objects, which no row can satisfy (schemathesis found it: ST108 on `GET /v1/usage`).
fn row_view(r: UsageRow) -> UsageRowView {
    let t = UsageTotalsView::from(r.totals);
    UsageRowView {
        thread_key: (!r.key.thread_key.is_empty()).then_some(r.key.thread_key),
        tenant: r.key.tenant,
        agent: r.key.agent,
        runs: t.runs,
        input_tokens: t.input_tokens,
        output_tokens: t.output_tokens,
        cached_input_tokens: t.cached_input_tokens,
        cost_usd: t.cost_usd,
        wall_seconds: t.wall_seconds,
        cpu_seconds: t.cpu_seconds,
        first_at: r.first_at,
        last_at: r.last_at,
    }
}

/// `GET /v1/usage`: usage per tenant, agent and thread.
#[utoipa::path(get, path = "/v1/usage", tag = "usage", params(("from" = Option<String>, Query, format = DateTime, description = "Runs that ended at or after this (RFC 3339)"), ("to" = Option<String>, Query, format = DateTime, description = "Runs that ended before this (RFC 3339)"), ("agent" = Option<String>, Query, description = "Only this agent"), ("thread_key" = Option<String>, Query, description = "Only this thread"), ("tenant" = Option<String>, Query, description = "Only this tenant: an operator key names any, a tenant key only itself"), ("after" = Option<String>, Query, description = "The `next` of the previous page"), ("limit" = Option<u32>, Query, minimum = 1, maximum = 1000, description = "Page size, 1 to 1000 (default 100)")), responses((status = 200, description = "A page of usage rows", body = UsageList), (status = 400, description = "invalid_query", body = crate::views::ErrorBody), (status = 403, description = "forbidden: a tenant key named another tenant", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: `limit`, `after` or the range", body = crate::views::ErrorBody)))]
pub async fn list(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Query(q): Query<UsageParams>,
) -> Result<Json<UsageList>, ApiError> {
    let limit = super::ranges::in_range("limit", q.limit.unwrap_or(100), 1, MAX_USAGE_PAGE)?;
    if let (Some(from), Some(to)) = (q.from, q.to)
        && from > to
    {
        return Err(ApiError::invalid("from", "`from` is after `to`"));
    }
    let admin = state.auth.is_admin(tenant.as_str());
    let scope = match q.tenant {
        Some(t) if admin || t == tenant.as_str() => Some(t),
        Some(_) => {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "only an operator key reads another tenant's usage",
            ));
        }
        None if admin => None,
        None => Some(tenant.as_str().to_owned()),
    };
    let query = UsageQuery {
        tenant: scope,
        agent: q.agent,
        thread_key: q.thread_key,
        from: q.from,
        to: q.to,
        after: q.after.as_deref().map(parse_cursor).transpose()?,
        limit,
    };
    let rows = state.store.usage(&query).await.map_err(ApiError::store)?;
    let next = (rows.len() as u32 == limit)
        .then(|| rows.last().map(|r| cursor(&r.key)))
        .flatten();
    let mut totals = UsageTotals::default();
    for r in &rows {
        let t = &r.totals;
        totals.runs = totals.runs.saturating_add(t.runs);
        totals.input_tokens = totals.input_tokens.saturating_add(t.input_tokens);
        totals.output_tokens = totals.output_tokens.saturating_add(t.output_tokens);
        totals.cached_input_tokens = totals.cached_input_tokens.saturating_add(t.cached_input_tokens);
        totals.cost_micros = totals.cost_micros.saturating_add(t.cost_micros);
        totals.wall_ms = totals.wall_ms.saturating_add(t.wall_ms);
        totals.cpu_ms = totals.cpu_ms.saturating_add(t.cpu_ms);
    }
    Ok(Json(UsageList {
        usage: rows.into_iter().map(row_view).collect(),
        totals: totals.into(),
        next,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        let key = UsageKey {
            tenant: "acme".into(),
            agent: "claude".into(),
            thread_key: "t/1".into(),
        };
        assert_eq!(parse_cursor(&cursor(&key)).unwrap(), key);
        assert_eq!(parse_cursor("zz").unwrap_err().code, ErrorCode::InvalidRequest);
        assert_eq!(parse_cursor("00").unwrap_err().code, ErrorCode::InvalidRequest);
    }
}
