//! Redaction of secret-bearing fields, applied to every record whatever the exposure policy.
//!
//! A value is replaced by `"[redacted]"` when its key names a secret (`*key*`, `*token*`,
//! `*secret*`, `*password*`, `authorization`, `cookie`, `credential*`), when it sits under an
//! `env` object (environment values are secrets by default), or when the value itself looks like
//! a credential (`Bearer …`, `sk-…`, `ghp_…`, `xoxb-…`, `AKIA…`).

use serde_json::Value;

/// The replacement text.
pub const REDACTED: &str = "[redacted]";

fn secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    if matches!(k.as_str(), "key" | "message_id" | "kind") {
        return false;
    }
    [
        "api_key",
        "apikey",
        "api-key",
        "token",
        "secret",
        "password",
        "passwd",
        "authorization",
        "cookie",
        "credential",
    ]
    .iter()
    .any(|s| k.contains(s))
        || k.ends_with("_key")
        || k.ends_with("-key")
}

fn secret_value(v: &str) -> bool {
    let t = v.trim();
    let lower = t.to_ascii_lowercase();
    (lower.starts_with("bearer ") && t.len() > 7)
        || [
            "sk-",
            "sk_live_",
            "ghp_",
            "gho_",
            "github_pat_",
            "xoxb-",
            "xoxp-",
            "akia",
        ]
        .iter()
        .any(|p| lower.starts_with(p) && t.len() >= 16 && !t.contains(' '))
}

fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '+' | '/' | '-')
}

/// Redacts credential-shaped tokens inside free text: known key prefixes, and whatever follows
/// the word `Bearer`.
fn scrub_text(s: &mut String) {
    let mut out = String::with_capacity(s.len());
    let mut changed = false;
    let mut after_bearer = false;
    let mut rest = s.as_str();
    while !rest.is_empty() {
        let start = rest.find(token_char).unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        if rest.is_empty() {
            break;
        }
        let end = rest.find(|c: char| !token_char(c)).unwrap_or(rest.len());
        let token = &rest[..end];
        if after_bearer || secret_value(token) {
            out.push_str(REDACTED);
            changed = true;
            after_bearer = false;
        } else {
            after_bearer = token.eq_ignore_ascii_case("bearer");
            out.push_str(token);
        }
        rest = &rest[end..];
    }
    if changed {
        *s = out;
    }
}

/// A string holding a JSON object or array is redacted structurally, then re-serialized.
fn scrub_json_string(s: &mut String) -> bool {
    let t = s.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return false;
    }
    match serde_json::from_str::<Value>(s) {
        Ok(mut v) => {
            walk(&mut v, false);
            *s = v.to_string();
            true
        }
        Err(_) => false,
    }
}

fn walk(v: &mut Value, under_env: bool) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                let env = k.eq_ignore_ascii_case("env") || k.eq_ignore_ascii_case("environment");
                if (secret_key(k) || under_env) && !child.is_object() && !child.is_array() && !child.is_null()
                {
                    *child = Value::String(REDACTED.into());
                } else {
                    walk(child, env || (under_env && child.is_object()));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| walk(i, under_env)),
        Value::String(s) => {
            if secret_value(s) {
                *s = REDACTED.into();
            } else if !scrub_json_string(s) {
                scrub_text(s);
            }
        }
        _ => {}
    }
}

/// Redacts `value` in place.
pub fn redact(value: &mut Value) {
    walk(value, false);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_env_values_and_credential_shaped_strings_are_redacted() {
        let mut v = json!({
            "type": "notice",
            "data": {
                "api_key": "abc",
                "ANTHROPIC_API_KEY": "x",
                "env": {"PATH": "/usr/bin", "HOME": "/root"},
                "headers": {"Authorization": "Bearer abcdef"},
                "note": "use Bearer tok-123 to call",
                "pasted": "sk-abcdefghijklmnopqrstuvwx",
                "message_id": "m1",
                "text": "hello world",
            }
        });
        redact(&mut v);
        let d = &v["data"];
        assert_eq!(d["api_key"], REDACTED);
        assert_eq!(d["ANTHROPIC_API_KEY"], REDACTED);
        assert_eq!(d["env"]["PATH"], REDACTED);
        assert_eq!(d["headers"]["Authorization"], REDACTED);
        assert_eq!(d["note"], "use Bearer [redacted] to call");
        assert_eq!(d["pasted"], REDACTED);
        assert_eq!(d["message_id"], "m1", "ids are not secrets");
        assert_eq!(d["text"], "hello world");
    }

    #[test]
    fn json_inside_strings_and_inline_tokens_are_redacted() {
        let mut v = json!({
            "args_delta": "{\"env\":{\"X\":\"v\"},\"api_key\":\"k\"}",
            "log": "curl -H \"Authorization: Bearer abc123\" https://h",
            "pasted": "key=sk-abcdefghijklmnop1234;",
        });
        redact(&mut v);
        let args: Value = serde_json::from_str(v["args_delta"].as_str().unwrap()).unwrap();
        assert_eq!(args["env"]["X"], REDACTED);
        assert_eq!(args["api_key"], REDACTED);
        assert!(!v["log"].as_str().unwrap().contains("abc123"));
        assert!(!v["pasted"].as_str().unwrap().contains("sk-abcdefghijklmnop1234"));
    }
}
