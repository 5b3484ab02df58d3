//! The Stream handle of one execution: events, supplemental sends, the result and cancellation.

use std::sync::Arc;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::broker::{Broker, Events};
use super::error::{Error, MessageError, MessageErrorKind};
use super::messages::MessageQueue;
use super::options::MessageOptions;
use super::result::RunResult;
use super::verdict::Verdict;

/// What `result()` returns: success, or the one error verdict.
pub type RunOutcome = Result<Arc<RunResult>, Error>;

pub(crate) struct Shared {
    pub run_id: String,
    pub broker: Arc<Broker>,
    pub queue: Option<Arc<MessageQueue>>,
    pub outcome: watch::Receiver<Option<RunOutcome>>,
    pub cancel: CancellationToken,
    pub verdict: Verdict,
    pub cpu: crate::driver::process::CpuMeter,
}

/// The handle of one execution. Cheap to clone; all clones observe the same execution.
///
/// A Stream (like a [`Standby`](super::Standby)) is stopped with `cancel`; it has no `close`, which
/// is the Agent's resource shutdown (§2). Cancelling compiles:
///
/// ```
/// fn stop(stream: &agent_adaptor::runtime::Stream, standby: &agent_adaptor::runtime::Standby) {
///     stream.cancel();
///     standby.cancel();
/// }
/// ```
///
/// and closing either does not:
///
/// ```compile_fail
/// fn stop(stream: &agent_adaptor::runtime::Stream) {
///     stream.close();
/// }
/// ```
///
/// ```compile_fail
/// fn stop(standby: &agent_adaptor::runtime::Standby) {
///     standby.close();
/// }
/// ```
#[derive(Clone)]
pub struct Stream {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("run_id", &self.shared.run_id)
            .finish()
    }
}

impl Stream {
    /// The execution id (empty for a send refused before admission).
    pub fn run_id(&self) -> &str {
        &self.shared.run_id
    }

    /// The event stream. Single consumer: call it before consuming progress; a second call returns
    /// another handle on the same consumer (it continues where the other stopped; no event is
    /// delivered twice), not a second subscription. A call after completion yields the retained
    /// critical log ending in `Done`.
    pub fn events(&self) -> Events {
        Events::new(self.shared.broker.clone())
    }

    /// Waits for the final outcome. Repeatable and concurrency-safe; every call returns the same
    /// pair. Calling it without ever calling `events` releases blocked producers.
    pub async fn result(&self) -> RunOutcome {
        self.shared.broker.result_requested();
        let mut rx = self.shared.outcome.clone();
        loop {
            if let Some(outcome) = rx.borrow_and_update().clone() {
                return outcome;
            }
            if rx.changed().await.is_err() {
                // The execution task ended without an outcome (it panicked): report it.
                return Err(Error::Infrastructure(
                    "the execution task ended without a result".into(),
                ));
            }
        }
    }

    /// The CPU time (user + system) the execution's provider processes used so far: children it
    /// spawned, from their rusage when they exited, and a persistent process it leased, for the time
    /// of the lease (see [`CpuMeter`](crate::driver::process::CpuMeter)). Zero where it cannot be
    /// measured.
    pub fn cpu_time(&self) -> std::time::Duration {
        self.shared.cpu.total()
    }

    /// The outcome if the execution already finished.
    pub fn try_result(&self) -> Option<RunOutcome> {
        self.shared.outcome.borrow().clone()
    }

    /// Cancels the execution. Idempotent; unblocks producers, approval waits and pending input.
    pub fn cancel(&self) {
        self.shared.verdict.confirm(
            super::error::FailureReason::Cancelled,
            "cancelled by the caller",
            Default::default(),
        );
        self.shared.broker.cancel();
        self.shared.cancel.cancel();
    }

    /// Stops the execution with a failure of the host's own, like [`cancel`](Self::cancel) but with
    /// `reason` (and `details`) as the verdict instead of `cancelled`: a service ends a run that outgrew
    /// the log budget it enforces as `limit_exceeded`. The first confirmed cause still wins.
    pub fn fail(
        &self,
        reason: super::error::FailureReason,
        message: impl Into<String>,
        details: crate::driver::JsonMap,
    ) {
        self.shared.verdict.confirm(reason, message, details);
        self.shared.broker.cancel();
        self.shared.cancel.cancel();
    }

    /// Publishes a notice of the host's own into this execution's events, numbered like the driver's
    /// (a service's budget warning, say). Ignored once the execution finished.
    pub fn notice(&self, notice: crate::driver::Notice) {
        self.shared
            .broker
            .publish_critical(super::event::Payload::Notice(notice), None);
    }

    /// Sends a supplemental message into this execution. `Ok` returns the message id and means
    /// admission, not delivery; delivery is reported by `MessageUpdate` events and the result's
    /// message outcomes.
    pub async fn send(
        &self,
        text: impl Into<String>,
        opts: impl Into<MessageOptions>,
    ) -> Result<String, MessageError> {
        let text = text.into();
        let opts = opts.into();
        match &self.shared.queue {
            Some(q) => q.admit(text, opts.attrs, None).await,
            None => Err(MessageError {
                id: opts.attrs.id.unwrap_or_default(),
                text,
                kind: MessageErrorKind::RunFinished,
            }),
        }
    }

    /// Like [`Stream::send`], with the send's cancellation (its context): when `cancel` fires while
    /// the queue is full, admission is abandoned; when it fires after admission but before the driver
    /// claimed the message, the message is withdrawn (its outcome fails `cancelled`, keeping its text).
    /// A claimed message is settled by the driver.
    pub async fn send_cancellable(
        &self,
        text: impl Into<String>,
        opts: impl Into<MessageOptions>,
        cancel: CancellationToken,
    ) -> Result<String, MessageError> {
        let text = text.into();
        let opts = opts.into();
        match &self.shared.queue {
            Some(q) => q.admit(text, opts.attrs, Some(cancel)).await,
            None => Err(MessageError {
                id: opts.attrs.id.unwrap_or_default(),
                text,
                kind: MessageErrorKind::RunFinished,
            }),
        }
    }

    /// Publishes a critical notice into this execution's stream (a no-op once it finished).
    pub(crate) fn publish_notice(&self, notice: crate::driver::Notice) {
        self.shared
            .broker
            .publish_critical(super::event::Payload::Notice(notice), None);
    }

    /// Records input that never reached this execution as a failed outcome of it (a Standby's
    /// queued input when it is cancelled), with its `MessageUpdate`.
    pub(crate) fn record_failed(
        &self,
        id: &str,
        text: &str,
        from: &crate::driver::Author,
        timing: crate::driver::Timing,
        reason: crate::driver::MessageFailure,
    ) {
        if let Some(q) = &self.shared.queue {
            q.record_failed(id, text, from, timing, reason);
        }
    }

    /// Published and dropped event counts so far (for metrics).
    pub fn event_counters(&self) -> (u64, u64) {
        self.shared.broker.counters()
    }
}
