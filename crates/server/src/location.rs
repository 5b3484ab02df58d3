//! The `Location` header of a `201 Created` answer: the created resource's path (`/v1/runs/{id}`,
//! `/v1/agents/{agent}/threads/{key}`), each segment percent-encoded so a thread key with `/`, `?`,
//! spaces or non-ASCII text still names exactly that thread.

use axum::http::HeaderValue;
use axum::http::header::LOCATION;
use axum::response::{IntoResponse, Response};

/// `segment` percent-encoded for a URL path: everything but RFC 3986's unreserved characters.
pub fn segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path of run `run_id`.
pub fn run(run_id: &str) -> String {
    format!("/v1/runs/{}", segment(run_id))
}

/// The path of thread `key` of `agent`.
pub fn thread(agent: &str, key: &str) -> String {
    format!("/v1/agents/{}/threads/{}", segment(agent), segment(key))
}

/// `response` with `Location: path` (percent-encoded paths are always a valid header value).
pub fn with(path: &str, response: impl IntoResponse) -> Response {
    let mut response = response.into_response();
    if let Ok(value) = HeaderValue::from_str(path) {
        response.headers_mut().insert(LOCATION, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_percent_encoded() {
        assert_eq!(segment("plain-key_1.x~"), "plain-key_1.x~");
        assert_eq!(segment("a/b c?d"), "a%2Fb%20c%3Fd");
        assert_eq!(segment("é"), "%C3%A9");
        assert_eq!(thread("reference", "k/1"), "/v1/agents/reference/threads/k%2F1");
    }
}
