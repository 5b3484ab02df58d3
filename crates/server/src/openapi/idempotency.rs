//! The `Idempotency-Key` header in the document: one reusable parameter (`#/components/parameters/
//! IdempotencyKey`) referenced by every operation that honours it ([`crate::idempotency::ROUTES`]),
//! the `Idempotent-Replayed` header on their 2xx answers, and their `409 idempotency_in_progress` and
//! `422 idempotency_mismatch` answers.

use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{Ref, RefOr, Required};

use crate::idempotency::{MAX_KEY_LEN, ROUTES};

/// The component name of the parameter.
const PARAMETER: &str = "IdempotencyKey";

/// Adds the parameter to the components and to every honouring operation.
pub struct Idempotency;

impl utoipa::Modify for Idempotency {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.parameters.insert(
            PARAMETER.to_owned(),
            RefOr::T(
                ParameterBuilder::new()
                    .name("Idempotency-Key")
                    .parameter_in(ParameterIn::Header)
                    .required(Required::False)
                    .description(Some(format!(
                        "Makes a retry safe: 1 to {MAX_KEY_LEN} visible ASCII characters, unique per intended \
                         request, kept 24 hours per tenant. The same key with the same request (method, path, \
                         JSON body) replays the first 2xx answer with `Idempotent-Replayed: true` instead of \
                         doing the work again; with a different request it is 422 `idempotency_mismatch`; while \
                         the first is in flight it is 409 `idempotency_in_progress` (`Retry-After: 1`; a claim \
                         lapses after 120 s). An answer that is not 2xx is not kept: retrying runs the request."
                    )))
                    .schema(Some(
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .min_length(Some(1))
                            .max_length(Some(MAX_KEY_LEN))
                            .build(),
                    ))
                    .build(),
            ),
        );
        for path in ROUTES {
            let Some(item) = doc.paths.paths.get_mut(*path) else {
                continue;
            };
            if let Some(op) = item.post.as_mut() {
                document(op);
            }
        }
    }
}

/// The parameter reference, replay header and idempotency errors of one operation.
fn document(op: &mut Operation) {
    op.parameters
        .get_or_insert_with(Vec::new)
        .push(RefOr::Ref(Ref::new(format!(
            "#/components/parameters/{PARAMETER}"
        ))));
    for (status, response) in op.responses.responses.iter_mut() {
        if let (true, RefOr::T(response)) = (status.starts_with('2'), response) {
            response.headers.insert(
                "Idempotent-Replayed".to_owned(),
                RefOr::T(
                    HeaderBuilder::new()
                        .description(Some(
                            "`true` when this is the stored answer of an earlier request with the same \
                             Idempotency-Key",
                        ))
                        .build(),
                ),
            );
        }
    }
    super::errors::document_error(
        op,
        "409",
        "idempotency_in_progress",
        "idempotency_in_progress: a request with this Idempotency-Key is still in flight (`Retry-After: 1`)",
    );
    super::errors::document_error(
        op,
        "422",
        "idempotency_mismatch",
        "idempotency_mismatch: this Idempotency-Key was used for a different request; invalid_request: a \
         malformed Idempotency-Key",
    );
}
