//! The per-run writer: records a run's events into the durable log in order, off the live path.
//!
//! The pump publishes each batch to the run's in-memory mirror first and hands it to this writer; the
//! writer coalesces whatever has queued since its last commit into one transaction (so a slow commit
//! makes the next one bigger, not later). At most `record_backlog` events of a run wait for the
//! store (default [`MAX_UNRECORDED`]): beyond that the pump waits (counted as `record_waits`), which is the runtime stream's
//! backpressure. A batch the store refuses is retried while the error is retryable; once a batch is
//! lost the writer records nothing more of the run, so the durable log stays a gap-free prefix, and
//! every later flush answers the typed [`StoreError`]. Each commit is reported to the run's live log
//! ([`super::runlog::RunLog::committed`]), which may then drop the committed events from memory.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

use super::runs::{RunEntry, RunRegistry};
use crate::recorder::Recorder;
use crate::store::{NewEvent, StoreError};

/// The default of [`ServerConfig::record_backlog`](super::config::ServerConfig::record_backlog).
pub const MAX_UNRECORDED: usize = 4096;
/// Events per transaction, at most, when the writer coalesces queued batches.
const MAX_PER_COMMIT: usize = 2048;
/// Pauses before retrying a batch the store refused with a retryable error.
const RETRY_DELAYS: [Duration; 3] = [
    Duration::from_millis(10),
    Duration::from_millis(100),
    Duration::from_millis(1000),
];

/// Whether the events handed to the writer so far are durable.
pub type Durable = Result<(), StoreError>;

struct Job {
    events: Vec<NewEvent>,
    _permit: Option<OwnedSemaphorePermit>,
    ack: Option<oneshot::Sender<Durable>>,
}

/// The pump's handle on its run's writer.
pub struct Writer {
    jobs: mpsc::UnboundedSender<Job>,
    room: Arc<Semaphore>,
    bound: usize,
    registry: Arc<RunRegistry>,
}

impl Writer {
    /// Starts the writer of one run; the returned future is the writer task (spawn it).
    /// At most `bound` events wait for the store (at least one).
    pub fn start(
        recorder: Recorder,
        registry: Arc<RunRegistry>,
        bound: usize,
        entry: Arc<RunEntry>,
    ) -> (Writer, impl Future<Output = ()> + Send + 'static) {
        let (jobs, rx) = mpsc::unbounded_channel();
        let bound = bound.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        let writer = Writer {
            jobs,
            room: Arc::new(Semaphore::new(bound)),
            bound,
            registry: registry.clone(),
        };
        (writer, run(recorder, rx, registry, entry))
    }

    /// Queues a batch for the store, waiting (counted) while the backlog is full.
    pub async fn queue(&self, events: Vec<NewEvent>) {
        if events.is_empty() {
            return;
        }
        let permit = self.room(events.len()).await;
        let _ = self.jobs.send(Job {
            events,
            _permit: permit,
            ack: None,
        });
    }

    /// Queues a batch and waits until it and everything queued before it are durable (or lost: the
    /// store's error).
    pub async fn flush(&self, events: Vec<NewEvent>) -> Durable {
        let permit = self.room(events.len()).await;
        let (ack, durable) = oneshot::channel();
        let job = Job {
            events,
            _permit: permit,
            ack: Some(ack),
        };
        if self.jobs.send(job).is_err() {
            return Err(StoreError::Unavailable {
                detail: "the run's writer stopped".into(),
            });
        }
        durable.await.unwrap_or_else(|_| {
            Err(StoreError::Unavailable {
                detail: "the run's writer stopped".into(),
            })
        })
    }

    async fn room(&self, n: usize) -> Option<OwnedSemaphorePermit> {
        let n = u32::try_from(n.min(self.bound)).unwrap_or(u32::MAX);
        if n == 0 {
            return None;
        }
        match self.room.clone().try_acquire_many_owned(n) {
            Ok(p) => Some(p),
            Err(_) => {
                self.registry.metrics.record_waits.fetch_add(1, Ordering::Relaxed);
                self.room.clone().acquire_many_owned(n).await.ok()
            }
        }
    }
}

async fn run(
    recorder: Recorder,
    mut rx: mpsc::UnboundedReceiver<Job>,
    registry: Arc<RunRegistry>,
    entry: Arc<RunEntry>,
) {
    let run_id = entry.run_id.clone();
    let mut lost: Option<StoreError> = None;
    while let Some(first) = rx.recv().await {
        let mut jobs = vec![first];
        let mut n = jobs[0].events.len();
        while n < MAX_PER_COMMIT {
            match rx.try_recv() {
                Ok(job) => {
                    n += job.events.len();
                    jobs.push(job);
                }
                Err(_) => break,
            }
        }
        if lost.is_none() {
            let events: Vec<NewEvent> = jobs
                .iter_mut()
                .flat_map(|j| std::mem::take(&mut j.events))
                .collect();
            let last = events.iter().map(|e| e.seq).max();
            match append(&recorder, events).await {
                // Durable: the live window may let these go.
                Ok(()) => entry.log.committed(last.unwrap_or(0)),
                Err(e) => {
                    registry.metrics.record_failures.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(run_id = %run_id, error = %e, "recording failed; the run's later events stay in memory only");
                    lost = Some(e);
                }
            }
        }
        for job in jobs {
            if let Some(ack) = job.ack {
                let _ = ack.send(lost.clone().map_or(Ok(()), Err));
            }
        }
    }
}

/// One transaction, retried while the store says retrying may help.
async fn append(recorder: &Recorder, events: Vec<NewEvent>) -> Durable {
    if events.is_empty() {
        return Ok(());
    }
    let mut delays = RETRY_DELAYS.iter();
    loop {
        match recorder.append(events.clone()).await {
            Ok(_) => return Ok(()),
            Err(e) if e.is_retryable() => match delays.next() {
                Some(d) => tokio::time::sleep(*d).await,
                None => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
}
