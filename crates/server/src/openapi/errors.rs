//! The error answers every operation with a JSON request body can give before its handler runs, added
//! to the document here so no handler can forget one: `400 invalid_json` / `unreadable_body`, `408
//! body_timeout`, `413 body_too_large` (the `body_limit`) and `415 unsupported_media_type` (the strict
//! [`super::super::body::JsonBody`]; the AG-UI route parses any content type as JSON, so it has no 415).
//! An answer the handler's own attribute already lists keeps its description, extended with these codes.

use utoipa::openapi::path::Operation;
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};

/// `(status, description)` of the body errors of every JSON-body operation; the 415 is skipped where
/// `lenient` (the AG-UI routes).
const BODY_ERRORS: &[(&str, &str, bool)] = &[
    (
        "400",
        "invalid_json: the body is not JSON or a value does not parse as its type (`field` names it); \
         unreadable_body: the body could not be read",
        true,
    ),
    (
        "408",
        "body_timeout: the body did not arrive within the body read timeout",
        true,
    ),
    (
        "413",
        "body_too_large: the body is over the server's `body_limit`",
        true,
    ),
    (
        "415",
        "unsupported_media_type: the body is not `application/json`",
        false,
    ),
];

/// Answers the handlers' own attributes do not list, by `(path, status, code, description)`: the
/// Standby's input goes through the same message admission as a run's (`ApiError::message`).
const EXTRA: &[(&str, &str, &str, &str)] = &[(
    "/v1/agents/{agent}/threads/{key}/standby/messages",
    "403",
    "messages_disabled",
    "messages_disabled: the agent takes no supplemental messages",
)];

/// Adds the answers of [`EXTRA`] to the operations at `path`.
pub fn extra_errors(path: &str, op: &mut Operation) {
    for &(at, status, code, description) in EXTRA {
        if at == path {
            document_error(op, status, code, description);
        }
    }
}

/// Adds the body errors to `op` when it takes a JSON body.
pub fn body_errors(op: &mut Operation) {
    let Some(RefOr::T(body)) = &op.request_body else {
        return;
    };
    if !body.content.contains_key("application/json") {
        return;
    }
    let lenient = op.tags.as_ref().is_some_and(|t| t.iter().any(|t| t == "agui"));
    for &(status, description, always) in BODY_ERRORS {
        if lenient && !always {
            continue;
        }
        let code = description.split(':').next().unwrap_or_default();
        document_error(op, status, code, description);
    }
}

/// Documents that `op` answers `status` with the JSON error shape: adds `description` to the response
/// already listed for `status` (unless it names `code` already), or lists one with the `ErrorBody`
/// schema. A shared (`$ref`) response is left as it is.
pub fn document_error(op: &mut Operation, status: &str, code: &str, description: &str) {
    match op.responses.responses.get_mut(status) {
        Some(RefOr::T(existing)) => {
            if !existing.description.contains(code) {
                existing.description = format!("{}; {description}", existing.description);
            }
        }
        Some(RefOr::Ref(_)) => {}
        None => {
            let response = ResponseBuilder::new()
                .description(description)
                .content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name("ErrorBody")))
                        .build(),
                )
                .build();
            op.responses.responses.insert(status.into(), response.into());
        }
    }
}
