//! hyper's own answers in the service's JSON error shape.
//!
//! hyper answers a request it cannot parse by itself, before any service sees it: `400` (malformed
//! head), `414` (request target too long), `431` (header fields too large or too many), always with an
//! empty body (`content-length: 0`, `connection: close`) and no `content-type`. The service's own
//! responses always carry a `content-type` (every error is JSON), so such a head is recognisable on the
//! wire: [`rewrite`] turns it into the same status with the service's `{"error":{…}}` body, and the
//! connection's socket wrapper (`conn_io::Watched`) writes that instead.

use super::error::ErrorCode;
use super::listen::raw_error;

/// The service's answer for hyper's own error head `head` (the first bytes of a response), or `None`
/// when `head` is not one of hyper's bodiless parse-error answers.
pub(crate) fn rewrite(head: &[u8]) -> Option<Vec<u8>> {
    // Every write of every response passes here: anything but a 4xx head leaves at once, and hyper's
    // own heads are short.
    if !head.starts_with(b"HTTP/1.1 4") {
        return None;
    }
    let head = &head[..head.len().min(512)];
    let end = head.windows(4).position(|w| w == b"\r\n\r\n")?;
    let text = std::str::from_utf8(&head[..end]).ok()?.to_ascii_lowercase();
    let mut lines = text.split("\r\n");
    let status: u16 = lines.next()?.strip_prefix("http/1.1 ")?.get(..3)?.parse().ok()?;
    let headers: Vec<&str> = lines.collect();
    let has = |name: &str, value: Option<&str>| {
        headers.iter().any(|h| {
            h.split_once(':')
                .is_some_and(|(n, v)| n.trim() == name && value.is_none_or(|want| v.trim() == want))
        })
    };
    if has("content-type", None) || !has("content-length", Some("0")) {
        return None;
    }
    let (code, message) = match status {
        400 => (
            ErrorCode::MalformedRequest,
            "the request is not valid HTTP/1.1 (its request line or a header could not be parsed)",
        ),
        414 => (
            ErrorCode::UriTooLong,
            "the request target is longer than the service accepts",
        ),
        431 => (
            ErrorCode::HeadersTooLarge,
            "the request's header fields are larger, or more, than the service accepts",
        ),
        _ => return None,
    };
    Some(raw_error(code, message, false))
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    fn body(raw: &[u8]) -> serde_json::Value {
        let text = std::str::from_utf8(raw).unwrap();
        serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap()
    }

    #[test]
    fn hypers_bodiless_parse_errors_become_json_with_their_status() {
        for (status, code) in [
            (400, "malformed_request"),
            (414, "uri_too_long"),
            (431, "headers_too_large"),
        ] {
            let head =
                format!("HTTP/1.1 {status} X\r\nconnection: close\r\ncontent-length: 0\r\ndate: now\r\n\r\n");
            let out = rewrite(head.as_bytes()).expect("rewritten");
            assert!(out.starts_with(format!("HTTP/1.1 {status} ").as_bytes()));
            assert_eq!(body(&out)["error"]["code"], code);
        }
    }

    #[test]
    fn the_services_own_responses_are_left_alone() {
        for head in [
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n",
            "HTTP/1.1 400 Bad Request\r\ncontent-length: 12\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
            "HTTP/1.1 431 X\r\ncontent-length: 0\r\n",
            "garbage",
        ] {
            assert!(rewrite(head.as_bytes()).is_none(), "{head}");
        }
    }
}
