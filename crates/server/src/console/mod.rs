//! The console: a small run-history UI served from the binary (no build step, nothing loaded from the
//! network). `GET /` serves its page; `GET /console/{file}` its ES modules and stylesheet. Every response
//! carries a strict `Content-Security-Policy` (`default-src 'self'`, no inline script or style), so data
//! from the API can only ever be text. The page itself needs no key; its API calls send the key the user
//! typed (kept in `sessionStorage`) as `Authorization: Bearer`, events included (fetch-based SSE).
//!
//! The routes the page calls are listed in one `ROUTES` table in `api.js`; a test checks each against the
//! API.

use axum::extract::Path;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

/// The policy every console response carries: only this origin's scripts, styles and API; no inline
/// code, no frames, no plugins, no form posts.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The page (`GET /`).
pub const PAGE: &str = include_str!("index.html");

/// The assets under `/console/`: `(file name, content type, body)`.
pub const ASSETS: &[(&str, &str, &str)] = &[
    ("app.js", JS, include_str!("app.js")),
    ("api.js", JS, include_str!("api.js")),
    ("sse.js", JS, include_str!("sse.js")),
    ("render.js", JS, include_str!("render.js")),
    ("style.css", "text/css; charset=utf-8", include_str!("style.css")),
];

const JS: &str = "text/javascript; charset=utf-8";

/// The body of the asset called `name`, when there is one.
pub fn asset(name: &str) -> Option<&'static str> {
    ASSETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, body)| *body)
}

/// A static response with the console's security headers.
fn serve(content_type: &'static str, body: &'static str) -> Response {
    let mut resp = body.into_response();
    let headers = resp.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    resp
}

/// `GET /`.
#[utoipa::path(get, path = "/", tag = "playground", responses((status = 200, description = "The console page", content_type = "text/html; charset=utf-8", body = String)))]
pub async fn page() -> impl IntoResponse {
    serve("text/html; charset=utf-8", PAGE)
}

/// `GET /console/{file}`: one of [`ASSETS`], else 404.
pub async fn file(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, content_type, body)) => serve(content_type, body),
        None => super::ApiError::not_found("no such console file").into_response(),
    }
}
