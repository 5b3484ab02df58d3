//! NUL (U+0000) in JSON on Postgres. `jsonb` cannot hold `\u0000`, so every JSON value this backend
//! stores is encoded first and decoded when read, and a payload with NUL round-trips exactly as on the
//! memory and SQLite stores (STORE-21). Strings and object keys are rewritten only when they contain
//! NUL or the escape character [`ESC`] (U+E000, private use): NUL → `ESC '0'`, `ESC` → `ESC ESC`.
//! Everything else is stored as is, so existing rows read back unchanged (only a legacy string with
//! `ESC '0'` or `ESC ESC` in it would be read differently).

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The escape character.
pub(super) const ESC: char = '\u{E000}';

fn needs_encoding(s: &str) -> bool {
    s.contains(['\0', ESC])
}

fn any_string(v: &Value, test: fn(&str) -> bool) -> bool {
    match v {
        Value::String(s) => test(s),
        Value::Array(items) => items.iter().any(|i| any_string(i, test)),
        Value::Object(map) => map.iter().any(|(k, v)| test(k) || any_string(v, test)),
        _ => false,
    }
}

fn map_strings(v: Value, f: fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(f(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(|i| map_strings(i, f)).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (f(&k), map_strings(v, f)))
                .collect::<Map<String, Value>>(),
        ),
        other => other,
    }
}

fn encode_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        match c {
            '\0' => {
                out.push(ESC);
                out.push('0');
            }
            ESC => {
                out.push(ESC);
                out.push(ESC);
            }
            c => out.push(c),
        }
    }
    out
}

fn decode_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ESC {
            match chars.peek() {
                Some('0') => {
                    chars.next();
                    out.push('\0');
                    continue;
                }
                Some(&ESC) => {
                    chars.next();
                    out.push(ESC);
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// The value as stored: borrowed unless a string or key holds NUL or [`ESC`].
pub(super) fn encode(v: &Value) -> Cow<'_, Value> {
    if any_string(v, needs_encoding) {
        Cow::Owned(map_strings(v.clone(), encode_str))
    } else {
        Cow::Borrowed(v)
    }
}

/// [`encode`] of an optional value.
pub(super) fn encode_opt(v: Option<&Value>) -> Option<Cow<'_, Value>> {
    v.map(encode)
}

/// The value as written, from the value as stored.
pub(super) fn decode(v: Value) -> Value {
    if any_string(&v, |s| s.contains(ESC)) {
        map_strings(v, decode_str)
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nul_and_the_escape_round_trip_and_plain_values_stay_borrowed() {
        let plain = json!({"a": ["b", 1, null], "c": "d"});
        assert!(matches!(encode(&plain), Cow::Borrowed(_)));
        let tricky = json!({"k\u{0}ey": ["x\u{0}y", "\u{E000}0", "\u{E000}", "\u{0}\u{0}"], "n": 1});
        let stored = encode(&tricky).into_owned();
        assert!(!stored.to_string().contains("\\u0000"), "{stored}");
        assert_eq!(decode(stored), tricky);
    }
}
