//! The `initialize` answer echoes the API key (`account.token`, and the account ids are derived from it).
//! That line is consumed by the handshake and never translated, and before the raw stdout goes into
//! `Response.raw` every string in its `account` object is replaced by `<redacted>`.

use serde_json::Value;

use super::super::wire::INITIALIZE_REQUEST_ID;

/// The replacement text.
pub const REDACTED: &str = "<redacted>";

fn redact_line(line: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(line).ok()?;
    if !text.contains(INITIALIZE_REQUEST_ID) || !text.contains("\"account\"") {
        return None;
    }
    let mut v: Value = serde_json::from_str(text).ok()?;
    let account = v.pointer_mut("/response/response/account")?.as_object_mut()?;
    for value in account.values_mut() {
        if value.is_string() {
            *value = Value::String(REDACTED.into());
        }
    }
    serde_json::to_vec(&v).ok()
}

/// `stdout` with the account of every `initialize` answer redacted (other lines byte for byte).
pub fn redact_stdout(stdout: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(stdout.len());
    for line in stdout.split_inclusive(|b| *b == b'\n') {
        let (body, nl) = match line.strip_suffix(b"\n") {
            Some(b) => (b, true),
            None => (line, false),
        };
        match redact_line(body) {
            Some(r) => {
                out.extend_from_slice(&r);
                if nl {
                    out.push(b'\n');
                }
            }
            None => out.extend_from_slice(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_initialize_answer_loses_its_key_and_nothing_else_changes() {
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("tests/fixtures/codebuddy/control_allow.jsonl");
        let raw = std::fs::read(path).unwrap();
        assert!(String::from_utf8_lossy(&raw).contains("dummy-key"));
        let out = redact_stdout(&raw);
        let text = String::from_utf8(out).unwrap();
        assert!(
            !text.contains("dummy-key") && !text.contains("ummy-key"),
            "the key is gone"
        );
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(
            first.pointer("/response/response/account/token").unwrap(),
            REDACTED
        );
        assert!(
            first.pointer("/response/response/models").is_some(),
            "the rest is kept"
        );
        let before: Vec<&str> = std::str::from_utf8(&raw).unwrap().lines().skip(1).collect();
        let after: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(before, after, "other lines are untouched");
        assert_eq!(
            redact_stdout(b"{\"type\":\"x\"}\npartial"),
            b"{\"type\":\"x\"}\npartial"
        );
    }
}
