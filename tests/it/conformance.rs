//! The conformance kit: the reference driver passes every clause, the correct baseline passes,
//! and each negative control is rejected for the clause it breaks — by `check_driver` and by the
//! public verification helpers on their own.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{
    Checkpoint, Driver, DriverEvent, Failure, FailureCode, Notice, Phase, Request, Role, SessionState,
    TerminalPayload, TextDelta, Thinking, TranscriptItem, TranscriptKind, notice_kind,
};
use agent_adaptor::testkit::conformance::broken::{BrokenDriver, Flaw};
use agent_adaptor::testkit::conformance::{
    Options, Recording, RunProbe, Violation, check_driver, record, verify_outcome, verify_run_events,
    verify_stream_capability, verify_stream_sequence, verify_transcript, verify_transcript_mirror,
};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};

fn probe(prompt: &'static str) -> Options {
    Options {
        run: Some(RunProbe {
            request: Box::new(move || Request::new("conformance", prompt, std::env::temp_dir())),
            message: Some("a supplemental note".into()),
            timeout: Duration::from_secs(10),
        }),
        session_state: None,
    }
}

#[tokio::test]
async fn the_reference_driver_passes_every_clause() {
    for prompt in ["hello", "permission please", "plan and question", "fail now"] {
        let factory = || Arc::new(ReferenceDriver::new(ReferenceConfig::default())) as Arc<dyn Driver>;
        let report = check_driver(&factory, probe(prompt)).await;
        report.assert_passed();
        if prompt != "hello" {
            continue;
        }
        for clause in [
            "DRV-01", "DRV-02", "CAP-01", "SES-04", "EVT-03", "EVT-11", "RUN-04", "MSG-01", "RSP-05",
        ] {
            assert!(
                report.checked.contains(&clause),
                "{clause} was not checked for {prompt:?}"
            );
        }
    }
}

#[tokio::test]
async fn the_baseline_passes_and_every_negative_control_is_rejected() {
    let baseline = || BrokenDriver::with_flaw(None);
    check_driver(&baseline, probe("x")).await.assert_passed();
    for (flaw, clause) in Flaw::all() {
        let factory = move || BrokenDriver::with_flaw(Some(flaw));
        let report = check_driver(&factory, probe("x")).await;
        assert!(
            report.violated(clause),
            "{flaw:?} must violate {clause}; got {:?}",
            report.violations
        );
    }
}

/// The recording of one reference-driver run (a conforming input for every helper).
async fn reference_recording() -> (Arc<dyn Driver>, Recording) {
    let driver: Arc<dyn Driver> = Arc::new(ReferenceDriver::new(ReferenceConfig::default()));
    let probe = RunProbe {
        request: Box::new(|| Request::new("verify", "hello", std::env::temp_dir())),
        message: None,
        timeout: Duration::from_secs(10),
    };
    let rec = record(driver.clone(), &probe).await;
    (driver, rec)
}

fn clauses(v: &[Violation]) -> Vec<&'static str> {
    v.iter().map(|v| v.clause).collect()
}

fn text(id: &str, t: &str, phase: Phase) -> DriverEvent {
    DriverEvent::TextDelta(TextDelta {
        message_id: id.into(),
        text: t.into(),
        phase,
        role: Role::Assistant,
    })
}

/// Each public helper accepts a conforming run and rejects a deliberately broken input (its negative
/// control) with the clause it breaks.
#[tokio::test]
async fn each_verification_helper_accepts_a_conforming_run_and_rejects_its_negative_control() {
    let (driver, rec) = reference_recording().await;
    let resp = rec.response.clone().expect("the reference run returned");
    assert!(
        !rec.events.is_empty() && !resp.transcript.is_empty(),
        "a non-trivial baseline"
    );
    let codec = driver.session_codec();
    let descriptor = driver.descriptor();

    // verify_stream_sequence
    assert_eq!(verify_stream_sequence(&rec.events), vec![]);
    let content_first = vec![text("m", "hi", Phase::Content), text("m", "", Phase::End)];
    assert_eq!(
        clauses(&verify_stream_sequence(&content_first)),
        ["EVT-03", "EVT-03"]
    );
    let unclosed = vec![text("m", "", Phase::Start), text("m", "hi", Phase::Content)];
    assert_eq!(clauses(&verify_stream_sequence(&unclosed)), ["EVT-11"]);
    let empty_chunk = vec![
        text("m", "", Phase::Start),
        text("m", "", Phase::Content),
        text("m", "", Phase::End),
    ];
    assert_eq!(clauses(&verify_stream_sequence(&empty_chunk)), ["EVT-04"]);

    // verify_stream_capability
    assert_eq!(verify_stream_capability(&descriptor, &rec.events), vec![]);
    let mut quiet = descriptor.clone();
    quiet.stream.reasoning = false;
    let thinking = vec![DriverEvent::Thinking(Thinking {
        message_id: "t".into(),
        text: String::new(),
        phase: Phase::Start,
    })];
    assert_eq!(clauses(&verify_stream_capability(&quiet, &thinking)), ["EVT-12"]);

    // verify_run_events
    assert_eq!(verify_run_events(&rec.events), vec![]);
    let mut nameless = TranscriptItem::new(TranscriptKind::ToolCall, String::new());
    nameless.tool_use_id = "c1".into();
    let broken_events = vec![
        DriverEvent::Notice(Notice::new(notice_kind::TRANSCRIPT_ITEM, "no item")),
        DriverEvent::transcript(nameless.clone()),
    ];
    assert_eq!(clauses(&verify_run_events(&broken_events)), ["RUN-02", "TRN-02"]);

    // verify_transcript
    assert_eq!(verify_transcript(&resp.transcript), vec![]);
    let mut delta_tool = TranscriptItem::new(TranscriptKind::ToolResult, "out");
    delta_tool.delta = true;
    delta_tool.tool_use_id = "c1".into();
    let broken_transcript = vec![
        TranscriptItem::new(TranscriptKind::Assistant, String::new()),
        nameless,
        TranscriptItem::new(TranscriptKind::ToolResult, "out"),
        delta_tool,
    ];
    assert_eq!(
        clauses(&verify_transcript(&broken_transcript)),
        ["TRN-01", "TRN-02", "TRN-03", "TRN-04"]
    );

    // verify_transcript_mirror
    assert_eq!(verify_transcript_mirror(&rec.events, &resp.transcript), vec![]);
    let mut reordered = resp.transcript.clone();
    reordered.push(TranscriptItem::new(TranscriptKind::Assistant, "never emitted"));
    assert_eq!(
        clauses(&verify_transcript_mirror(&rec.events, &reordered)),
        ["RUN-04"]
    );
    assert_eq!(
        clauses(&verify_transcript_mirror(&[], &resp.transcript)),
        ["RUN-04"]
    );

    // verify_outcome
    assert_eq!(verify_outcome(&resp, codec.as_deref()), vec![]);
    let mut failed = resp.clone();
    failed.failure = Some(Failure::new(FailureCode::AgentError, "failed"));
    failed.checkpoint = Some(Checkpoint {
        state: SessionState {
            resume_id: "s1".into(),
            ..Default::default()
        },
        valid: true,
    });
    assert_eq!(clauses(&verify_outcome(&failed, codec.as_deref())), ["RSP-01"]);
    let mut dump = resp.clone();
    dump.raw.stdout = b"{\"type\":\"result\"}\n".to_vec();
    dump.text = String::from_utf8_lossy(&dump.raw.stdout).into_owned();
    dump.raw.terminal = Some(TerminalPayload {
        event: String::new(),
        json: serde_json::json!({"subtype": "success"}),
    });
    assert_eq!(
        clauses(&verify_outcome(&dump, codec.as_deref())),
        ["RSP-03", "RSP-05"]
    );
}

/// The kit's own negative controls, recorded with `record` and checked with the helpers alone: each
/// flaw a helper covers is found by that helper, with its clause.
#[tokio::test]
async fn the_helpers_alone_reject_the_kits_broken_drivers() {
    let probe = RunProbe {
        request: Box::new(|| Request::new("verify", "x", std::env::temp_dir())),
        message: Some("a supplemental note".into()),
        timeout: Duration::from_secs(10),
    };
    let helpers = |d: &Arc<dyn Driver>, rec: &Recording| {
        let mut v = verify_stream_sequence(&rec.events);
        v.extend(verify_stream_capability(&d.descriptor(), &rec.events));
        v.extend(verify_run_events(&rec.events));
        if let Some(resp) = &rec.response {
            v.extend(verify_transcript(&resp.transcript));
            v.extend(verify_transcript_mirror(&rec.events, &resp.transcript));
            v.extend(verify_outcome(resp, d.session_codec().as_deref()));
        }
        v
    };
    let baseline = BrokenDriver::with_flaw(None);
    let rec = record(baseline.clone(), &probe).await;
    assert_eq!(helpers(&baseline, &rec), vec![]);
    let mut covered = 0;
    for (flaw, clause) in Flaw::all() {
        if !(clause.starts_with("EVT")
            || clause.starts_with("RUN")
            || clause.starts_with("TRN")
            || clause.starts_with("RSP"))
            || clause == "EVT-13"
        {
            continue;
        }
        covered += 1;
        let d = BrokenDriver::with_flaw(Some(flaw));
        let rec = record(d.clone(), &probe).await;
        let v = helpers(&d, &rec);
        assert!(
            v.iter().any(|v| v.clause == clause),
            "{flaw:?} must violate {clause} through the helpers; got {v:?}"
        );
    }
    assert!(
        covered >= 10,
        "the helpers cover the EVT/RUN/TRN/RSP controls ({covered})"
    );
}
