//! Redaction of secret-bearing fields, applied to every record whatever the exposure policy.
//!
//! A value is replaced by `"[redacted]"` when its key names a secret (`*key*`, `*token*`,
//! `*secret*`, `*password*`, `authorization`, `cookie`, `credential*`), when it sits under an
//! `env` object (environment values are secrets by default), or when the value itself looks like
//! a credential (`Bearer …`, `sk-…`, `ghp_…`, `xoxb-…`, `AKIA…`).

use serde_json::Value;

/// The replacement text.
pub const REDACTED: &str = "[redacted]";

/// True when `hay` contains `needle` (ASCII lowercase), ignoring ASCII case, without allocating.
fn contains_ignore_case(hay: &str, needle: &str) -> bool {
    hay.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// True when `s` starts with `prefix` (ASCII lowercase), ignoring ASCII case.
fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.as_bytes()
        .get(..prefix.len())
        .is_some_and(|h| h.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// True when `s` ends with `suffix` (ASCII lowercase), ignoring ASCII case.
fn ends_with_ignore_case(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len() && s.as_bytes()[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

fn secret_key(key: &str) -> bool {
    if ["key", "message_id", "kind"]
        .iter()
        .any(|k| key.eq_ignore_ascii_case(k))
    {
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
    .any(|s| contains_ignore_case(key, s))
        || ends_with_ignore_case(key, "_key")
        || ends_with_ignore_case(key, "-key")
}

fn secret_value(v: &str) -> bool {
    let t = v.trim();
    (starts_with_ignore_case(t, "bearer ") && t.len() > 7)
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
        .any(|p| starts_with_ignore_case(t, p) && t.len() >= 16 && !t.contains(' '))
}

fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '+' | '/' | '-')
}

/// Redacts credential-shaped tokens inside free text: known key prefixes, and whatever follows
/// the word `Bearer`. Text without such a token is left as it is, without a copy.
fn scrub_text(s: &mut String) {
    // The copy starts at the first token that must go; until then nothing is allocated.
    let mut out: Option<String> = None;
    let mut after_bearer = false;
    let mut pos = 0;
    while pos < s.len() {
        let start = s[pos..].find(token_char).map_or(s.len(), |i| pos + i);
        if let Some(out) = out.as_mut() {
            out.push_str(&s[pos..start]);
        }
        if start == s.len() {
            break;
        }
        let end = s[start..]
            .find(|c: char| !token_char(c))
            .map_or(s.len(), |i| start + i);
        let token = &s[start..end];
        if after_bearer || secret_value(token) {
            out.get_or_insert_with(|| {
                let mut copy = String::with_capacity(s.len());
                copy.push_str(&s[..start]);
                copy
            })
            .push_str(REDACTED);
            after_bearer = false;
        } else {
            after_bearer = token.eq_ignore_ascii_case("bearer");
            if let Some(out) = out.as_mut() {
                out.push_str(token);
            }
        }
        pos = end;
    }
    if let Some(out) = out {
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

    #[test]
    fn free_text_keeps_everything_but_the_credential_tokens() {
        let mut plain = String::from("message 42 at 1700000000 — ünïcode, punctuation; no secrets");
        let before = plain.clone();
        scrub_text(&mut plain);
        assert_eq!(plain, before);

        let mut mixed =
            String::from("é BEARER abc.def/ghi then SK-ABCDEFGHIJKLMNOPQRST, and ghp_0123456789abcdef!");
        scrub_text(&mut mixed);
        assert_eq!(mixed, "é BEARER [redacted] then [redacted], and [redacted]!");

        let mut edge = String::from("sk-abcdefghijklmnop1234");
        scrub_text(&mut edge);
        assert_eq!(edge, REDACTED);
    }

    #[test]
    fn key_and_prefix_checks_ignore_case_without_matching_more() {
        assert!(secret_key("X-Api-Key"));
        assert!(secret_key("GITHUB_TOKEN"));
        assert!(secret_key("private-KEY"));
        assert!(!secret_key("KEY"), "a bare `key` names a map key, not a secret");
        assert!(!secret_key("Message_Id"));
        assert!(!secret_key("monkey"));
        assert!(secret_value("  Bearer x"));
        assert!(!secret_value("Bearer "));
        assert!(secret_value("AKIAABCDEFGHIJKLMNOP"));
        assert!(!secret_value("sk-short"));
        assert!(!secret_value("sk-abcdefgh ijklmnop"));
    }
}
