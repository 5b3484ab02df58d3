//! Strict JSON request bodies: a size limit, `application/json` only, unknown fields refused, a JSON
//! array never taken for an object (serde accepts `["hi"]` as a positional struct; the service does not,
//! at any depth), and errors that name the offending field by its path (`approvals.timeout`, `mcp[0]`).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{ApiError, ErrorCode};

/// A JSON body parsed strictly into `T` (which should `deny_unknown_fields`).
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

fn invalid_json(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidJson, message)
}

/// `path` (serde_path_to_error's form, `.` for the root) joined with `key`.
fn join(path: &str, key: &str) -> String {
    match path {
        "." | "" => key.to_owned(),
        p => format!("{p}.{key}"),
    }
}

/// The field of a failed parse: the path where serde stopped, plus the key of an `unknown field` (so an
/// unknown key inside `approvals` is `approvals.<key>`).
fn field_of(path: &str, message: &str) -> Option<String> {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let key = rest.split('`').next().unwrap_or_default();
        // serde_path_to_error's path already ends at the unknown key on some versions.
        return Some(if path == key || path.ends_with(&format!(".{key}")) {
            path.to_owned()
        } else {
            join(path, key)
        });
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        return Some(join(path, rest.split('`').next().unwrap_or_default()));
    }
    (path != ".").then(|| path.to_owned())
}

/// The first place where the input has an array and the parsed value an object: a struct (or a tagged
/// enum) that serde filled positionally.
fn positional(input: &Value, parsed: &Value, path: &str) -> Option<String> {
    match (input, parsed) {
        (Value::Array(_), Value::Object(_)) => Some(if path.is_empty() { ".".into() } else { path.into() }),
        (Value::Object(a), Value::Object(b)) => a.iter().find_map(|(k, v)| {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            b.get(k).and_then(|w| positional(v, w, &p))
        }),
        (Value::Array(a), Value::Array(b)) => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (v, w))| positional(v, w, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// A request's workspace spec, refusing keys besides `type` on the unit variants (`shared`,
/// `driver_managed`): serde's `deny_unknown_fields` does not reach the unit variants of an internally
/// tagged enum.
pub fn strict_workspace<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<crate::workspace::WorkspaceSpec>, D::Error> {
    use serde::Deserialize;
    use serde::de::Error;
    let Some(value) = Option::<Value>::deserialize(d)? else {
        return Ok(None);
    };
    if let Value::Object(map) = &value
        && matches!(
            map.get("type").and_then(Value::as_str),
            Some("shared" | "driver_managed")
        )
        && let Some(extra) = map.keys().find(|k| *k != "type")
    {
        return Err(D::Error::custom(format!(
            "unknown field `{extra}`, expected `type`"
        )));
    }
    crate::workspace::WorkspaceSpec::deserialize(value)
        .map(Some)
        .map_err(D::Error::custom)
}

/// Parses `bytes` as `T`: `400 invalid_json` naming the field's path when serde fails, or when an array
/// stands where `T` has an object.
pub fn parse<T: DeserializeOwned + Serialize>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = match serde_path_to_error::deserialize(&mut de) {
        Ok(v) => v,
        Err(e) => {
            let path = e.path().to_string();
            let message = e.into_inner().to_string();
            let mut err = invalid_json(message.clone());
            if let Some(f) = field_of(&path, &message) {
                err = err.field(f);
            }
            return Err(err);
        }
    };
    de.end().map_err(|e| invalid_json(e.to_string()))?;
    let input: Value = serde_json::from_slice(bytes).map_err(|e| invalid_json(e.to_string()))?;
    let parsed = serde_json::to_value(&value).map_err(|e| invalid_json(e.to_string()))?;
    if let Some(path) = positional(&input, &parsed, "") {
        let err = invalid_json(format!(
            "invalid type: sequence at {path}, expected a JSON object (arrays are not taken as positional fields)"
        ));
        return Err(err.field(path));
    }
    Ok(value)
}

impl<S: Send + Sync, T: DeserializeOwned + Serialize> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json") || v.contains("+json"));
        if !json {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                "expected Content-Type: application/json",
            ));
        }
        let bytes = Bytes::from_request(req, state).await?;
        let bytes = if is_blank(&bytes) {
            Bytes::from_static(b"{}")
        } else {
            bytes
        };
        parse(&bytes).map(JsonBody)
    }
}

/// An absent body: nothing but JSON whitespace (space, tab, LF, CR) stands for `{}`. Other ASCII
/// whitespace (form feed) is not JSON and is refused as `invalid_json`.
fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, Serialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        #[serde(default)]
        a: u32,
        #[serde(default)]
        b: Option<String>,
    }

    #[derive(Debug, serde::Deserialize, Serialize)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        name: String,
        #[serde(default)]
        inner: Option<Inner>,
        #[serde(default)]
        list: Vec<Inner>,
        #[serde(default)]
        free: Option<Value>,
    }

    fn field(body: &str) -> Option<String> {
        parse::<Outer>(body.as_bytes()).expect_err(body).field
    }

    #[test]
    fn errors_name_the_path() {
        assert_eq!(
            field(r#"{"name":"x","inner":{"zz":1}}"#).as_deref(),
            Some("inner.zz")
        );
        assert_eq!(
            field(r#"{"name":"x","inner":{"a":-1}}"#).as_deref(),
            Some("inner.a")
        );
        assert_eq!(field(r#"{"inner":{}}"#).as_deref(), Some("name"));
        assert_eq!(
            field(r#"{"name":"x","list":[{},{"q":1}]}"#).as_deref(),
            Some("list[1].q")
        );
        assert_eq!(field(r#"{"name":"x","oops":1}"#).as_deref(), Some("oops"));
    }

    #[test]
    fn arrays_are_never_positional_structs() {
        assert_eq!(field(r#"["x"]"#).as_deref(), Some("."));
        assert_eq!(field(r#"{"name":"x","inner":[1,"s"]}"#).as_deref(), Some("inner"));
        assert_eq!(field(r#"{"name":"x","inner":[]}"#).as_deref(), Some("inner"));
        assert_eq!(
            field(r#"{"name":"x","list":[{"a":1},[2]]}"#).as_deref(),
            Some("list[1]")
        );
        // Free-form values keep their arrays.
        let ok: Outer = parse(br#"{"name":"x","free":[[1],{"k":[2]}],"list":[{"a":1}]}"#).unwrap();
        assert_eq!(ok.list.len(), 1);
    }

    #[test]
    fn only_json_whitespace_is_an_absent_body() {
        for blank in ["", " ", "\t\r\n "] {
            assert!(is_blank(blank.as_bytes()), "{blank:?}");
        }
        // Found by scripts/api-fuzz.sh (ST201): a form feed was taken as an empty body, 201.
        for not_json in ["\x0c", " \x0c\n"] {
            assert!(!is_blank(not_json.as_bytes()), "{not_json:?}");
            assert_eq!(
                parse::<Outer>(not_json.as_bytes()).expect_err(not_json).code,
                ErrorCode::InvalidJson
            );
        }
    }

    #[test]
    fn trailing_bytes_are_refused() {
        assert!(parse::<Outer>(br#"{"name":"x"} {}"#).is_err());
    }
}
