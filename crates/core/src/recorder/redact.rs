//! Redaction of secret-bearing fields, applied to every record whatever the exposure policy.
//!
//! The rule is exact, so the log keeps everything that is not a secret (usage counts, `thread_key`,
//! `max_tokens`, `session_id`, …). A value is replaced by `"[redacted]"` when:
//!
//! - its key, compared case-insensitively with `-` read as `_`, is one of [`SECRET_KEYS`], or ends in
//!   `_` followed by one of [`SECRET_SUFFIXES`] (`ANTHROPIC_API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`);
//!   a key that merely *contains* such a word (`input_tokens`, `thread_key`, `bearer_token_env_var`)
//!   is not a secret. Strings and numbers under such a key are redacted; objects and arrays are
//!   walked, booleans and `null` kept;
//! - it sits under an `env` / `environment` object (environment values are secrets by default);
//! - the string itself looks like a credential ([`secret_value`]: `Bearer …`, `sk-…`, `ghp_…`,
//!   `github_pat_…`, `xoxb-…`, `AKIA…`, a JWT), or free text contains such a token (only the token
//!   goes, the sentence stays);
//! - a string holding a JSON object or array contains any of the above (it is redacted
//!   structurally and re-serialized; a string with nothing to redact is left byte for byte).

use serde_json::Value;

/// The replacement text.
pub const REDACTED: &str = "[redacted]";

/// True when `s` starts with `prefix` (ASCII lowercase), ignoring ASCII case.
fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.as_bytes()
        .get(..prefix.len())
        .is_some_and(|h| h.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Key names that are secrets (compared case-insensitively, `-` read as `_`).
pub const SECRET_KEYS: &[&str] = &[
    "api_key",
    "apikey",
    "x_api_key",
    "authorization",
    "proxy_authorization",
    "cookie",
    "set_cookie",
    "password",
    "passwd",
    "secret",
    "client_secret",
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "auth_token",
    "bearer_token",
    "session_token",
    "private_key",
    "secret_key",
    "secret_access_key",
    "credential",
    "credentials",
];

/// Last words (after a `_`) that make a compound key a secret: `OPENAI_API_KEY`, `GITHUB_TOKEN`,
/// `DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`. Only whole words count: `input_tokens` ends in `tokens`,
/// `thread_key` in `key`.
pub const SECRET_SUFFIXES: &[&str] = &[
    "api_key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "private_key",
    "secret_key",
    "access_key",
    "credential",
    "credentials",
];

/// `a` equals `b` (ASCII lowercase, `_` separators) ignoring case, with `-` in `a` read as `_`.
fn eq_name(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            let x = if *x == b'-' { b'_' } else { x.to_ascii_lowercase() };
            x == *y
        })
}

/// True when `key` names a secret under the documented rule ([`SECRET_KEYS`], [`SECRET_SUFFIXES`]).
pub fn secret_key(key: &str) -> bool {
    let k = key.as_bytes();
    if SECRET_KEYS.iter().any(|s| eq_name(k, s.as_bytes())) {
        return true;
    }
    SECRET_SUFFIXES.iter().any(|s| {
        let s = s.as_bytes();
        k.len() > s.len() + 1 && {
            let (head, tail) = k.split_at(k.len() - s.len());
            matches!(head.last(), Some(b'_' | b'-')) && eq_name(tail, s)
        }
    })
}

/// True when the string itself looks like a credential: `Bearer <token>`, a known key prefix
/// (`sk-`, `sk_live_`, `ghp_`, `gho_`, `ghu_`, `ghs_`, `github_pat_`, `xoxb-`, `xoxp-`, `AKIA`; at least 16
/// characters, no space), or a JWT (`eyJ…` with three dot-separated parts).
pub fn secret_value(v: &str) -> bool {
    let t = v.trim();
    (starts_with_ignore_case(t, "bearer ") && t.len() > 7)
        || [
            "sk-",
            "sk_live_",
            "ghp_",
            "gho_",
            "ghu_",
            "ghs_",
            "github_pat_",
            "xoxb-",
            "xoxp-",
            "akia",
        ]
        .iter()
        .any(|p| starts_with_ignore_case(t, p) && t.len() >= 16 && !t.contains(' '))
        || jwt(t)
}

/// `eyJ<header>.<payload>.<signature>`, base64url parts, at least 32 characters.
fn jwt(t: &str) -> bool {
    t.len() >= 32
        && t.starts_with("eyJ")
        && t.split('.').count() == 3
        && t.split('.').all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '+' | '/' | '-')
}

/// Redacts credential-shaped tokens inside free text: known key prefixes, and whatever follows
/// the word `Bearer`. Text without such a token is left as it is, without a copy.
fn scrub_text(s: &mut String) -> bool {
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
    match out {
        Some(out) => {
            *s = out;
            true
        }
        None => false,
    }
}

/// A string holding a JSON object or array is redacted structurally and re-serialized — only when
/// something in it was redacted, so a clean string keeps its exact text.
fn scrub_json_string(s: &mut String) -> Option<bool> {
    let t = s.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    let mut v = serde_json::from_str::<Value>(s).ok()?;
    let changed = walk(&mut v, false);
    if changed {
        *s = v.to_string();
    }
    Some(changed)
}

/// True for a value a secret key's redaction replaces (strings and numbers; objects and arrays are
/// walked, booleans and `null` say nothing secret).
fn scalar_secret(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Number(_))
}

/// Redacts in place; true when anything changed.
fn walk(v: &mut Value, under_env: bool) -> bool {
    let mut changed = false;
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                let env = k.eq_ignore_ascii_case("env") || k.eq_ignore_ascii_case("environment");
                if (secret_key(k) || under_env) && scalar_secret(child) {
                    if child.as_str() != Some(REDACTED) {
                        *child = Value::String(REDACTED.into());
                        changed = true;
                    }
                } else {
                    changed |= walk(child, env || (under_env && child.is_object()));
                }
            }
        }
        Value::Array(items) => {
            for i in items.iter_mut() {
                changed |= walk(i, under_env);
            }
        }
        Value::String(s) => {
            if secret_value(s) {
                *s = REDACTED.into();
                changed = true;
            } else {
                changed |= match scrub_json_string(s) {
                    Some(c) => c,
                    None => scrub_text(s),
                };
            }
        }
        _ => {}
    }
    changed
}

/// Redacts `value` in place.
pub fn redact(value: &mut Value) {
    walk(value, false);
}

/// Redacts `value` in place; true when anything was redacted.
pub fn redact_changed(value: &mut Value) -> bool {
    walk(value, false)
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
    fn usage_counts_and_ids_survive_and_clean_json_strings_keep_their_text() {
        let mut v = json!({
            "meta": {"thread_key": "t-1", "run_id": "r"},
            "usage": {"input_tokens": 3, "output_tokens": 4, "cached_input_tokens": 0},
            "args_delta": "{ \"max_tokens\": 5,  \"b\": [1, 2] }",
            "password": 1234,
            "secret": true,
        });
        let before = v.clone();
        let changed = redact_changed(&mut v);
        assert!(changed, "the numeric password goes");
        assert_eq!(v["password"], REDACTED);
        assert_eq!(v["secret"], true, "a boolean says nothing secret");
        assert_eq!(v["meta"], before["meta"]);
        assert_eq!(v["usage"], before["usage"]);
        assert_eq!(v["args_delta"], before["args_delta"], "byte for byte");
        let mut clean = json!({"usage": {"input_tokens": 1}});
        assert!(!redact_changed(&mut clean));
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
        for ok in [
            "input_tokens",
            "output_tokens",
            "cached_input_tokens",
            "max_tokens",
            "thread_key",
            "session_key",
            "session_id",
            "idempotency_key",
            "bearer_token_env_var",
            "secret_env",
            "tokens",
            "keyboard",
            "token_count",
        ] {
            assert!(!secret_key(ok), "{ok} is not a secret");
        }
        for secret in [
            "api_key",
            "Authorization",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "db_password",
            "AWS_SECRET_ACCESS_KEY",
            "access_token",
            "client-secret",
            "Cookie",
        ] {
            assert!(secret_key(secret), "{secret} is a secret");
        }
        assert!(secret_value(
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
        ));
        assert!(!secret_value("eyJ.not.a-token"));
        assert!(secret_value("  Bearer x"));
        assert!(!secret_value("Bearer "));
        assert!(secret_value("AKIAABCDEFGHIJKLMNOP"));
        assert!(!secret_value("sk-short"));
        assert!(!secret_value("sk-abcdefgh ijklmnop"));
    }
}
