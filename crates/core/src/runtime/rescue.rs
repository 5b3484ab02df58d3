//! The panic guard of an execution's task: a panic anywhere in an execution (the driver, a host tool
//! or service provider it calls, the core itself) ends the run as `infrastructure_error` with
//! `details.code = "internal_panic"` instead of leaving a stream that never ends.
//!
//! What the guard owns, cloned before the execution starts: the broker (to publish `RunFinished` and
//! `Done`), the message queue (closed, so waiting senders get an answer), the thread hooks (lease
//! renewal stopped and the lease released, so the thread is free at once), the cancellation token
//! (every task of the run that honours it stops) and the outcome channel. Everything else the
//! execution held is dropped while the panic unwinds: a driver's children are killed and reaped by
//! their `Child` handles, the profile claim and the skills directory go with their guards. The panic
//! message is logged (`tracing::error!`), not put into the run's error, which only says what happened.
//!
//! The guard also clamps the execution's timeout to [`MAX_WAIT`](super::decide::MAX_WAIT), so a request
//! value far out of range is a very long wait, never an overflow.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::broker::Broker;
use super::error::{Error, FailureReason, RunError};
use super::event::{Done, Payload, RunFinished};
use super::execution::{Execution, ExecutionHooks};
use super::messages::MessageQueue;
use super::result::RunResult;
use super::stream::RunOutcome;
use super::verdict::Verdict;
use crate::driver::{JsonMap, MessageFailure};

/// The `details.code` of a run whose task panicked.
const INTERNAL_PANIC: &str = "internal_panic";

/// What ends an execution whose task panicked.
struct Rescue {
    run_id: String,
    thread_id: String,
    broker: Arc<Broker>,
    queue: Arc<MessageQueue>,
    hooks: Option<Arc<dyn ExecutionHooks>>,
    verdict: Verdict,
    cancel: CancellationToken,
    outcome_tx: watch::Sender<Option<RunOutcome>>,
}

/// Runs `exec` to its end; a panic is caught and ends the run `failed` (see the module docs).
pub(crate) async fn guarded(mut exec: Execution) {
    // A request's execution timeout is clamped like an approval's deadline: drivers add it to an
    // `Instant`, which would overflow (a panic) for a value near `u64::MAX` seconds.
    exec.resolved.timeout = exec.resolved.timeout.map(|t| t.min(super::decide::MAX_WAIT));
    let rescue = Rescue {
        run_id: exec.run_id.clone(),
        thread_id: exec.thread_key.clone().unwrap_or_else(|| exec.run_id.clone()),
        broker: exec.broker.clone(),
        queue: exec.queue.clone(),
        hooks: exec.hooks.clone(),
        verdict: exec.verdict.clone(),
        cancel: exec.cancel.clone(),
        outcome_tx: exec.outcome_tx.clone(),
    };
    if let Err(panic) = AssertUnwindSafe(exec.run()).catch_unwind().await {
        rescue.end(panic).await;
    }
}

/// The panic's message, when it has one.
fn message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)")
}

impl Rescue {
    async fn end(self, panic: Box<dyn Any + Send>) {
        tracing::error!(
            run_id = %self.run_id,
            panic = message(panic.as_ref()),
            "the run's task panicked; the run ends failed"
        );
        let mut details = JsonMap::new();
        details.insert("code".into(), INTERNAL_PANIC.into());
        self.verdict.confirm(
            FailureReason::InfrastructureError,
            "the run stopped on an internal error (a panic in its task); see the service log",
            details,
        );
        // Everything of the run that honours the token stops (watchers, timers, sources).
        self.cancel.cancel();
        self.queue.close(MessageFailure::RunFailed);
        if let Some(hooks) = &self.hooks {
            // Stops lease renewal and releases the thread; a second panic here must not hang the run.
            if AssertUnwindSafe(hooks.release(&self.broker))
                .catch_unwind()
                .await
                .is_err()
            {
                tracing::error!(run_id = %self.run_id, "releasing the thread after a panic panicked too");
            }
        }
        let published = self.outcome_tx.borrow().clone();
        if let Some(outcome) = published {
            // The panic came after the outcome was published: `Done` carries that outcome (a no-op
            // when the terminal sequence was already sent).
            self.broker.finish(vec![Payload::Done(Done { outcome })], false);
            return;
        }
        let result = Arc::new(RunResult {
            run_id: self.run_id.clone(),
            ..Default::default()
        });
        let confirmed = self.verdict.get();
        let (reason, message, details, thread) = match confirmed {
            Some(c) => (c.reason, c.message, c.details, c.thread),
            None => (
                FailureReason::InfrastructureError,
                String::new(),
                JsonMap::new(),
                None,
            ),
        };
        let finished = RunFinished {
            run_id: self.run_id.clone(),
            thread_id: self.thread_id.clone(),
            usage: None,
            failed: true,
            reason: reason.to_string(),
            message: message.clone(),
        };
        let outcome: RunOutcome = Err(Error::Run(Arc::new(RunError {
            reason,
            message,
            details,
            result,
            causes: self.verdict.causes(),
            thread,
        })));
        self.outcome_tx.send_replace(Some(outcome.clone()));
        self.broker.finish(
            vec![Payload::RunFinished(finished), Payload::Done(Done { outcome })],
            false,
        );
    }
}
