//! `GET /`: the playground, one static HTML page embedded at compile time (no build step). It lists the
//! agents, starts a REST run, follows its SSE events live with `EventSource` (which resumes with
//! `Last-Event-ID`), shows the answer, and answers approvals, sends supplemental messages and cancels. The
//! routes it calls are listed in one `ROUTES` table in the page; a test checks each against the API.

use axum::http::header;
use axum::response::IntoResponse;

/// The page.
pub const PAGE: &str = include_str!("playground.html");

/// `GET /`.
#[utoipa::path(get, path = "/", tag = "playground", responses((status = 200, description = "The playground page", content_type = "text/html; charset=utf-8", body = String)))]
pub async fn page() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        PAGE,
    )
}
