//! The driver conformance kit: [`check_driver`] runs the clauses DRV / CFG / CAP / SO / SES / EVT /
//! RUN / TRN / RSP (after the Go original's adaptertest) plus message-lifecycle (MSG) and
//! approval-lifecycle (APR) clauses of our own, and reports every violation with its clause id.
//!
//! Hermetic clauses inspect the descriptor, the config check and the codec. The run clauses
//! invoke the driver once through a recording harness (events, claims, decisions) with a request
//! the caller provides — for CLI drivers, one pointed at a mock model server.
//! The checks of one invocation are public helpers ([`verify`]: `verify_outcome`,
//! `verify_stream_sequence`, `verify_stream_capability`, `verify_run_events`, `verify_transcript`,
//! `verify_transcript_mirror`) a third-party driver's tests can call on what [`record`] (or its own
//! harness) captured.
//! [`broken`] holds the negative controls: one deliberately broken driver per clause, which the
//! kit must reject.

pub mod broken;
mod harness;
mod run_clauses;
pub mod verify;

use std::sync::Arc;
use std::time::Duration;

use crate::driver::{Driver, Request, SessionState};

pub use harness::Recording;
pub use verify::{
    verify_outcome, verify_run_events, verify_stream_capability, verify_stream_sequence, verify_transcript,
    verify_transcript_mirror,
};

/// A clause violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Clause id (`EVT-03`, …).
    pub clause: &'static str,
    /// What was wrong.
    pub detail: String,
}

/// The outcome of a conformance check.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Clauses that ran.
    pub checked: Vec<&'static str>,
    /// Violations found.
    pub violations: Vec<Violation>,
}

impl Report {
    fn check(&mut self, clause: &'static str, ok: bool, detail: impl FnOnce() -> String) {
        if !self.checked.contains(&clause) {
            self.checked.push(clause);
        }
        if !ok {
            self.violations.push(Violation {
                clause,
                detail: detail(),
            });
        }
    }

    /// Records that `clauses` ran and adds `violations` (a verification helper's answer).
    fn absorb(&mut self, clauses: &[&'static str], violations: Vec<Violation>) {
        for c in clauses {
            if !self.checked.contains(c) {
                self.checked.push(c);
            }
        }
        self.violations.extend(violations);
    }

    /// True when no clause was violated.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }

    /// True when `clause` was violated.
    pub fn violated(&self, clause: &str) -> bool {
        self.violations.iter().any(|v| v.clause == clause)
    }

    /// Panics with every violation (for tests).
    ///
    /// # Panics
    /// When any clause was violated.
    pub fn assert_passed(&self) {
        assert!(self.passed(), "conformance violations:\n{:#?}", self.violations);
    }
}

/// How to run the run clauses.
pub struct RunProbe {
    /// Builds the request (cwd, env pointing at a mock server, …).
    pub request: Box<dyn Fn() -> Request + Send + Sync>,
    /// A supplemental message admitted before launch (exercises the MSG clauses when the driver
    /// declares message boundaries).
    pub message: Option<String>,
    /// Time limit for one invocation.
    pub timeout: Duration,
}

/// Options of [`check_driver`].
#[derive(Default)]
pub struct Options {
    /// Run the driver once; `None` checks only the hermetic clauses.
    pub run: Option<RunProbe>,
    /// A session state used for the codec clauses (defaults to a synthetic one).
    pub session_state: Option<SessionState>,
}

/// Runs `driver` once under `probe` with the recording harness (events, claims, settlements, decisions,
/// late emissions, the response), for the verification helpers ([`verify`]).
pub async fn record(driver: Arc<dyn Driver>, probe: &RunProbe) -> Recording {
    harness::run_once(driver, probe).await
}

/// Checks a driver built by `factory` (called more than once, to compare instances).
pub async fn check_driver(factory: &(dyn Fn() -> Arc<dyn Driver> + Send + Sync), options: Options) -> Report {
    let mut report = Report::default();
    let a = factory();
    let b = factory();
    let d = a.descriptor();

    report.check(
        "DRV-01",
        !d.driver_type.trim().is_empty() && !d.display_name.trim().is_empty(),
        || {
            format!(
                "type {:?} / display name {:?} must be non-empty",
                d.driver_type, d.display_name
            )
        },
    );
    report.check("DRV-02", d == a.descriptor() && d == b.descriptor(), || {
        "the descriptor differs across calls or instances".into()
    });
    report.check("CFG-02", a.validate_config().is_ok(), || {
        format!("validate_config refused: {:?}", a.validate_config())
    });

    let codec = a.session_codec();
    let fp_a = a.session_fingerprint();
    let fp_b = b.session_fingerprint();
    if d.sessions.resume || d.sessions.fork {
        report.check("CAP-01", codec.is_some(), || {
            "resume declared without a session codec".into()
        });
        report.check(
            "CAP-01",
            fp_a.as_deref().is_some_and(|f| !f.is_empty()) && fp_a == fp_b,
            || format!("resume needs a stable non-empty session fingerprint ({fp_a:?} vs {fp_b:?})"),
        );
    } else {
        report.check("CAP-01", true, String::new);
    }
    report.check(
        "SO-01",
        !d.structured.native_with_hitl || d.structured.native,
        || "native_with_hitl declared without native".into(),
    );
    if d.process.persistent {
        // On an instance of its own: closing ends a driver's processes for good, and `a` still runs.
        let closing = factory();
        let r = tokio::time::timeout(Duration::from_secs(10), closing.close_processes()).await;
        report.check("CAP-11", matches!(r, Ok(Ok(()))), || {
            format!("close_processes failed: {r:?}")
        });
    }
    report.check(
        "MSG-00",
        d.messages.continue_mode != crate::driver::ContinueMode::None || !d.messages.interrupt,
        || "interrupt declared without any continuation mode".into(),
    );

    if let Some(codec) = &codec {
        let state = options.session_state.clone().unwrap_or_else(|| {
            let mut s = SessionState {
                resume_id: "conformance-session".into(),
                display_id: "c".into(),
                ..Default::default()
            };
            s.data
                .insert(crate::driver::session::PARAM_CWD.into(), "/tmp".into());
            s
        });
        let name = codec.name().to_owned();
        report.check(
            "SES-01",
            !name.is_empty() && b.session_codec().is_some_and(|c| c.name() == name),
            || "codec name must be non-empty and stable".into(),
        );
        let encoded = codec.encode(&state);
        let decoded = codec.decode(&encoded);
        report.check("SES-04", decoded.as_ref() == Ok(&state), || {
            format!("codec round trip lost data: {decoded:?}")
        });
        let g1 = codec.guard_fingerprint(&state);
        report.check(
            "SES-05",
            !g1.is_empty() && g1 == codec.guard_fingerprint(&state),
            || "guard fingerprint must be non-empty and deterministic".into(),
        );
        let garbage = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = codec.decode(&serde_json::json!({"unexpected": [1, 2, 3]}));
            let _ = codec.decode(&serde_json::Value::Null);
        }));
        report.check("SES-07", garbage.is_ok(), || "decoding garbage panicked".into());
    }

    if let Some(probe) = &options.run {
        let recording = harness::run_once(a.clone(), probe).await;
        run_clauses::check(&mut report, &d, codec.as_deref(), &recording);
    }
    report
}
