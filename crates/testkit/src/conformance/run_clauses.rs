//! The clauses checked on one recorded invocation: the public verification helpers (`verify`: event
//! lifecycles EVT, run events RUN, transcript items TRN, the response RSP), plus what only the recording
//! harness sees: late events (EVT-13), message lifecycle (MSG) and approvals (APR).

use std::collections::HashMap;

use super::verify::{
    OUTCOME_CLAUSES, RUN_EVENT_CLAUSES, STREAM_CAPABILITY_CLAUSES, STREAM_SEQUENCE_CLAUSES,
    TRANSCRIPT_MIRROR_CLAUSES, verify_outcome, verify_run_events, verify_stream_capability,
    verify_stream_sequence, verify_transcript_mirror,
};
use super::{Recording, Report};
use crate::driver::{Ack, Boundary, DecisionMode, Descriptor, SessionCodec};

/// Checks one recording.
pub(super) fn check(report: &mut Report, d: &Descriptor, codec: Option<&dyn SessionCodec>, rec: &Recording) {
    report.check("RUN-00", rec.response.is_some(), || {
        "the invocation did not return in time".into()
    });
    report.absorb(STREAM_SEQUENCE_CLAUSES, verify_stream_sequence(&rec.events));
    report.absorb(
        STREAM_CAPABILITY_CLAUSES,
        verify_stream_capability(d, &rec.events),
    );
    report.absorb(RUN_EVENT_CLAUSES, verify_run_events(&rec.events));
    report.check("EVT-13", rec.late_events == 0, || {
        format!("{} events emitted after run returned", rec.late_events)
    });

    // Messages: claims only at declared boundaries, every claim settled exactly once.
    for (boundary, _) in &rec.claims {
        let declared = match boundary {
            Boundary::Interrupt => d.messages.interrupt,
            b => d.messages.boundaries.contains(b),
        };
        report.check("MSG-02", declared, || {
            format!("claimed at undeclared boundary {boundary}")
        });
    }
    report.check("MSG-01", rec.unsettled.is_empty(), || {
        format!("claims dropped without an ack: {:?}", rec.unsettled)
    });
    let mut settled: HashMap<&str, usize> = HashMap::new();
    for (id, ack) in &rec.settlements {
        if !matches!(ack, Ack::Requeue { .. }) {
            *settled.entry(id.as_str()).or_default() += 1;
        }
    }
    report.check("MSG-01", settled.values().all(|n| *n == 1), || {
        format!("messages settled more than once: {settled:?}")
    });

    // Approvals: only declared kinds, with a title and a source.
    for req in &rec.decisions {
        let kind = req.kind.unwrap_or(crate::driver::DecisionKind::Permission);
        report.check(
            "APR-01",
            d.stream.hitl && d.run_policy.modes(kind).contains(&DecisionMode::Ask),
            || format!("asked a {} decision without declaring it", kind.as_str()),
        );
        report.check("APR-02", !req.title.is_empty() && !req.source.is_empty(), || {
            "decision without title or source".into()
        });
    }

    let Some(resp) = &rec.response else { return };
    report.absorb(
        TRANSCRIPT_MIRROR_CLAUSES,
        verify_transcript_mirror(&rec.events, &resp.transcript),
    );
    report.absorb(OUTCOME_CLAUSES, verify_outcome(resp, codec));
}
