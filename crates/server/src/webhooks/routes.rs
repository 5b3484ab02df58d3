//! `/v1/webhooks`: a tenant's subscriptions (create, list, get, delete), each one's delivery log and a
//! manual retry. Tenant-scoped like runs: another tenant's webhook is 404; an operator key (`admin`)
//! sees and deletes every tenant's. The signing secret is shown once, in the 201 of the create.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{EventType, sign, target};
use crate::AppState;
use crate::auth::Tenant;
use crate::body::JsonBody;
use crate::error::{ApiError, ErrorCode};
use crate::extract::{Path, Query};
use crate::store::WebhookStore;
use crate::store::webhooks::{Attempt, Delivery, MAX_DELIVERY_PAGE, Webhook};

/// The longest description, in bytes.
pub const MAX_DESCRIPTION: usize = 1024;

/// The body of `POST /v1/webhooks`.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhookBody {
    /// Where deliveries are posted: an absolute `http` or `https` URL without credentials, at most
    /// 2048 bytes.
    pub url: String,
    /// The event types to receive (at least one): `run.finished`, `run.failed`, `approval.requested`,
    /// `message.failed`.
    pub events: Vec<String>,
    /// A note for humans (at most 1024 bytes).
    #[serde(default)]
    pub description: Option<String>,
}

/// A subscription (never its secret).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookView {
    /// The webhook id.
    pub id: String,
    /// The tenant whose events it receives.
    pub tenant: String,
    /// Where deliveries are posted.
    pub url: String,
    /// The event types it receives.
    pub events: Vec<String>,
    /// The note given at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// A subscription just created, with its signing secret (shown this once).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookCreated {
    /// The webhook id.
    pub id: String,
    /// The tenant whose events it receives.
    pub tenant: String,
    /// Where deliveries are posted.
    pub url: String,
    /// The event types it receives.
    pub events: Vec<String>,
    /// The note given at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// The signing secret, `whsec_` + base64 of 32 bytes: the HMAC-SHA256 key (its decoded bytes) of
    /// every delivery's `webhook-signature`. Only this answer shows it.
    pub secret: String,
}

/// The answer of `GET /v1/webhooks`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookList {
    /// The subscriptions, oldest first.
    pub webhooks: Vec<WebhookView>,
}

/// One attempt of a delivery.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AttemptView {
    /// The attempt number, from 1.
    pub attempt: u32,
    /// When it started.
    pub at: DateTime<Utc>,
    /// The receiver's HTTP status, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Why it failed without an answer (connection refused, timed out, refused target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
}

/// One event's delivery to one subscription, with its attempts.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeliveryView {
    /// The delivery id.
    pub id: String,
    /// The event id: the `webhook-id` header and the body's `id`, the same on every attempt.
    pub event_id: String,
    /// The event type.
    pub event_type: String,
    /// `pending` (waiting for an attempt, or in flight), `delivered` (a 2xx answer) or `failed` (given
    /// up).
    pub state: String,
    /// Attempts made.
    pub attempts: u32,
    /// When the next attempt is due (pending only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// When the event was enqueued.
    pub created_at: DateTime<Utc>,
    /// When the delivery last changed.
    pub updated_at: DateTime<Utc>,
    /// Its attempts, oldest first.
    pub log: Vec<AttemptView>,
}

/// The answer of `GET /v1/webhooks/{id}/deliveries`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeliveryList {
    /// The newest deliveries first.
    pub deliveries: Vec<DeliveryView>,
}

/// The query of `GET /v1/webhooks/{id}/deliveries`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeliveryParams {
    /// How many deliveries, 1 to 100 (default 20).
    pub limit: Option<u32>,
}

fn view(w: Webhook) -> WebhookView {
    WebhookView {
        id: w.id,
        tenant: w.tenant,
        url: w.url,
        events: w.events,
        description: w.description,
        created_at: w.created_at,
    }
}

fn attempt_view(a: Attempt) -> AttemptView {
    AttemptView {
        attempt: a.attempt,
        at: a.at,
        status: a.status,
        error: a.error,
        duration_ms: a.duration_ms,
    }
}

fn delivery_view(d: Delivery) -> DeliveryView {
    DeliveryView {
        id: d.id,
        event_id: d.event_id,
        event_type: d.event_type,
        state: d.state.as_str().to_owned(),
        attempts: d.attempts,
        next_attempt_at: d.next_attempt_at,
        created_at: d.created_at,
        updated_at: d.updated_at,
        log: d.log.into_iter().map(attempt_view).collect(),
    }
}

/// The webhook store, or 503 when this store keeps none.
fn store(state: &AppState) -> Result<&Arc<dyn WebhookStore>, ApiError> {
    state.webhooks.store().ok_or_else(|| {
        ApiError::new(
            ErrorCode::StoreUnavailable,
            "the configured store keeps no webhooks",
        )
    })
}

/// Whose webhooks `tenant` sees: its own, or every tenant's for an operator key.
fn scope<'a>(state: &AppState, tenant: &'a Tenant) -> Option<&'a str> {
    (!state.auth.is_admin(tenant.as_str())).then(|| tenant.as_str())
}

/// The webhook `id` as `tenant` sees it, else 404.
async fn visible(state: &AppState, tenant: &Tenant, id: &str) -> Result<Webhook, ApiError> {
    store(state)?
        .get_webhook(scope(state, tenant), id)
        .await
        .map_err(ApiError::store)?
        .ok_or_else(|| ApiError::not_found(format!("no webhook {id:?}")))
}

/// Checks a create body: the URL, at least one known event type, the description's size.
fn checked(body: &CreateWebhookBody, allow_private: bool) -> Result<Vec<String>, ApiError> {
    target::check_url(&body.url, allow_private).map_err(|e| ApiError::invalid("url", e.to_string()))?;
    if body.events.is_empty() {
        return Err(ApiError::invalid("events", "name at least one event type"));
    }
    let mut events: Vec<String> = Vec::new();
    for (i, e) in body.events.iter().enumerate() {
        if EventType::parse(e).is_none() {
            let known: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
            return Err(ApiError::invalid(
                &format!("events[{i}]"),
                format!("unknown event type {e:?}; known: {}", known.join(", ")),
            ));
        }
        if !events.contains(e) {
            events.push(e.clone());
        }
    }
    if let Some(d) = &body.description
        && (d.len() > MAX_DESCRIPTION || d.contains('\0'))
    {
        return Err(ApiError::invalid(
            "description",
            format!("description must be at most {MAX_DESCRIPTION} bytes, without NUL"),
        ));
    }
    Ok(events)
}

/// `POST /v1/webhooks`.
#[utoipa::path(post, path = "/v1/webhooks", tag = "webhooks", request_body = CreateWebhookBody, responses((status = 201, description = "The subscription, with its signing secret (shown only here)", body = WebhookCreated, headers(("Location" = String, description = "The webhook's path, `/v1/webhooks/{id}`"))), (status = 422, description = "invalid_request: a bad `url` (not http(s), credentials, a refused private address) or an unknown event type (`field` names it)", body = crate::views::ErrorBody), (status = 503, description = "store_unavailable: the store keeps no webhooks", body = crate::views::ErrorBody)))]
pub async fn create(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    JsonBody(body): JsonBody<CreateWebhookBody>,
) -> Result<Response, ApiError> {
    let events = checked(&body, state.webhooks.allows_private_targets())?;
    let webhook = Webhook {
        id: format!("wh_{}", uuid::Uuid::now_v7().simple()),
        tenant: tenant.as_str().to_owned(),
        url: body.url,
        events,
        description: body.description,
        secret: sign::new_secret(),
        created_at: crate::store::now(),
    };
    store(&state)?
        .create_webhook(&webhook)
        .await
        .map_err(ApiError::store)?;
    let location = format!("/v1/webhooks/{}", crate::location::segment(&webhook.id));
    let created = WebhookCreated {
        id: webhook.id,
        tenant: webhook.tenant,
        url: webhook.url,
        events: webhook.events,
        description: webhook.description,
        created_at: webhook.created_at,
        secret: webhook.secret,
    };
    Ok(crate::location::with(
        &location,
        (StatusCode::CREATED, Json(created)),
    ))
}

/// `GET /v1/webhooks`.
#[utoipa::path(get, path = "/v1/webhooks", tag = "webhooks", responses((status = 200, description = "The tenant's subscriptions (an operator key: every tenant's), oldest first, without secrets", body = WebhookList), (status = 503, description = "store_unavailable: the store keeps no webhooks", body = crate::views::ErrorBody)))]
pub async fn list(State(state): State<Arc<AppState>>, tenant: Tenant) -> Result<Json<WebhookList>, ApiError> {
    let all = store(&state)?
        .list_webhooks(scope(&state, &tenant))
        .await
        .map_err(ApiError::store)?;
    Ok(Json(WebhookList {
        webhooks: all.into_iter().map(view).collect(),
    }))
}

/// `GET /v1/webhooks/{id}`.
#[utoipa::path(get, path = "/v1/webhooks/{id}", tag = "webhooks", params(("id" = String, Path, description = "The webhook id")), responses((status = 200, description = "The subscription, without its secret", body = WebhookView), (status = 404, description = "not_found: no such webhook for this tenant", body = crate::views::ErrorBody), (status = 503, description = "store_unavailable: the store keeps no webhooks", body = crate::views::ErrorBody)))]
pub async fn get(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<WebhookView>, ApiError> {
    Ok(Json(view(visible(&state, &tenant, &id).await?)))
}

/// `DELETE /v1/webhooks/{id}`.
#[utoipa::path(delete, path = "/v1/webhooks/{id}", tag = "webhooks", params(("id" = String, Path, description = "The webhook id")), responses((status = 200, description = "Deleted, with its pending deliveries and its log; the subscription as it was", body = WebhookView), (status = 404, description = "not_found: no such webhook for this tenant", body = crate::views::ErrorBody), (status = 503, description = "store_unavailable: the store keeps no webhooks", body = crate::views::ErrorBody)))]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<WebhookView>, ApiError> {
    let hook = visible(&state, &tenant, &id).await?;
    let gone = store(&state)?
        .delete_webhook(scope(&state, &tenant), &id)
        .await
        .map_err(ApiError::store)?;
    if !gone {
        return Err(ApiError::not_found(format!("no webhook {id:?}")));
    }
    Ok(Json(view(hook)))
}

/// `GET /v1/webhooks/{id}/deliveries`.
#[utoipa::path(get, path = "/v1/webhooks/{id}/deliveries", tag = "webhooks", params(("id" = String, Path, description = "The webhook id"), ("limit" = Option<u32>, Query, description = "How many deliveries, 1 to 100 (default 20)")), responses((status = 200, description = "The newest deliveries, each with its attempts (status or error, duration) and next retry", body = DeliveryList), (status = 404, description = "not_found: no such webhook for this tenant", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: `limit` out of range", body = crate::views::ErrorBody), (status = 503, description = "store_unavailable: the store keeps no webhooks", body = crate::views::ErrorBody)))]
pub async fn deliveries(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(id): Path<String>,
    Query(params): Query<DeliveryParams>,
) -> Result<Json<DeliveryList>, ApiError> {
    let limit = params.limit.unwrap_or(20);
    if !(1..=MAX_DELIVERY_PAGE).contains(&limit) {
        return Err(ApiError::invalid(
            "limit",
            format!("limit must be 1 to {MAX_DELIVERY_PAGE}"),
        ));
    }
    let hook = visible(&state, &tenant, &id).await?;
    let all = store(&state)?
        .list_deliveries(&hook.id, limit)
        .await
        .map_err(ApiError::store)?;
    Ok(Json(DeliveryList {
        deliveries: all.into_iter().map(delivery_view).collect(),
    }))
}

/// `POST /v1/webhooks/{id}/deliveries/{delivery}/retry`.
#[utoipa::path(post, path = "/v1/webhooks/{id}/deliveries/{delivery}/retry", tag = "webhooks", params(("id" = String, Path, description = "The webhook id"), ("delivery" = String, Path, description = "The delivery id")), responses((status = 202, description = "The delivery is due now (one more attempt; a pending one is left as it is)", body = DeliveryView), (status = 404, description = "not_found: no such webhook or delivery for this tenant", body = crate::views::ErrorBody), (status = 503, description = "store_unavailable: the store keeps no webhooks", body = crate::views::ErrorBody)))]
pub async fn retry(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path((id, delivery)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let hook = visible(&state, &tenant, &id).await?;
    let d = store(&state)?
        .retry_delivery(&hook.id, &delivery, crate::store::now())
        .await
        .map_err(ApiError::store)?
        .ok_or_else(|| ApiError::not_found(format!("no delivery {delivery:?}")))?;
    state.webhooks.wake();
    Ok((StatusCode::ACCEPTED, Json(delivery_view(d))).into_response())
}
