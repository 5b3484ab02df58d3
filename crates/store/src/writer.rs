//! `EventWriter`: group commit for the run event log. Producers append one event at a time; a single
//! background task writes whatever has queued up meanwhile as one `append_events` batch.
//!
//! Every append is a durable commit, and a commit costs a disk flush (milliseconds on Postgres), so
//! appending token deltas one by one caps a store at a few hundred events per second. The writer keeps
//! one batch in flight and lets the next one fill while it commits, so batches grow with the load
//! (up to `max_batch`) and throughput follows, while an idle writer still commits a lone event at once.
//!
//! Ordering: events are written in the order they were queued, one batch at a time, so a producer's
//! events keep their order and a thread's cursors follow queue order. A batch that fails as a whole
//! because of one bad event (`Conflict`, `Invalid`) is retried event by event, so each producer gets its
//! own answer; any other error (for example `Unavailable`) is every queued producer's answer.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::{NewEvent, StoreError, StoreResult, ThreadStore};

/// One queued append and where its answer goes.
struct Pending {
    event: NewEvent,
    reply: oneshot::Sender<StoreResult<u64>>,
}

/// A cloneable handle that appends events through one background batching task.
#[derive(Clone)]
pub struct EventWriter {
    queue: mpsc::Sender<Pending>,
}

impl std::fmt::Debug for EventWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventWriter")
            .field("queued", &(self.queue.max_capacity() - self.queue.capacity()))
            .finish()
    }
}

impl EventWriter {
    /// Starts the background task (on the current tokio runtime). Batches hold at most `max_batch`
    /// events (at least 1); at most `4 × max_batch` appends wait in the queue before `append` waits too.
    /// The task ends when every handle is dropped and the queue is drained.
    pub fn spawn(store: Arc<dyn ThreadStore>, max_batch: usize) -> Self {
        let max_batch = max_batch.max(1);
        let (queue, pending) = mpsc::channel(max_batch.saturating_mul(4));
        tokio::spawn(run(store, pending, max_batch));
        EventWriter { queue }
    }

    /// Appends one event and returns its cursor once the batch that carries it has committed.
    pub async fn append(&self, event: NewEvent) -> StoreResult<u64> {
        let (reply, answer) = oneshot::channel();
        let closed = || StoreError::Unavailable {
            detail: "the event writer has stopped".to_owned(),
        };
        self.queue
            .send(Pending { event, reply })
            .await
            .map_err(|_| closed())?;
        answer.await.map_err(|_| closed())?
    }
}

async fn run(store: Arc<dyn ThreadStore>, mut pending: mpsc::Receiver<Pending>, max_batch: usize) {
    let mut batch = Vec::with_capacity(max_batch);
    while pending.recv_many(&mut batch, max_batch).await > 0 {
        write(store.as_ref(), std::mem::take(&mut batch)).await;
    }
}

async fn write(store: &dyn ThreadStore, batch: Vec<Pending>) {
    let events = batch.iter().map(|p| p.event.clone()).collect();
    match store.append_events(events).await {
        Ok(cursors) if cursors.len() == batch.len() => {
            for (pending, cursor) in batch.into_iter().zip(cursors) {
                let _ = pending.reply.send(Ok(cursor));
            }
        }
        Ok(cursors) => {
            let err = StoreError::Backend {
                detail: format!(
                    "the store returned {} cursors for {} events",
                    cursors.len(),
                    batch.len()
                ),
            };
            for pending in batch {
                let _ = pending.reply.send(Err(err.clone()));
            }
        }
        Err(StoreError::Conflict { .. } | StoreError::Invalid { .. }) if batch.len() > 1 => {
            for pending in batch {
                let one = store.append_events(vec![pending.event]).await;
                let answer = one.and_then(|cursors| {
                    cursors.first().copied().ok_or_else(|| StoreError::Backend {
                        detail: "no cursor".to_owned(),
                    })
                });
                let _ = pending.reply.send(answer);
            }
        }
        Err(err) => {
            for pending in batch {
                let _ = pending.reply.send(Err(err.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryStore;

    fn event(run: &str, seq: u64) -> NewEvent {
        NewEvent {
            tenant: "t".to_owned(),
            agent: "a".to_owned(),
            thread_key: Some("k".to_owned()),
            run_id: run.to_owned(),
            seq,
            kind: "text.content".to_owned(),
            event: serde_json::json!({"seq": seq}),
            at: crate::now(),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn producers_keep_their_order_and_get_their_cursors() {
        let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
        let writer = EventWriter::spawn(store.clone(), 64);
        let mut producers = Vec::new();
        for p in 0..8 {
            let writer = writer.clone();
            producers.push(tokio::spawn(async move {
                let mut cursors = Vec::new();
                for seq in 0..100 {
                    cursors.push(writer.append(event(&format!("run-{p}"), seq)).await.unwrap());
                }
                cursors
            }));
        }
        for producer in producers {
            let cursors = producer.await.unwrap();
            assert!(
                cursors.windows(2).all(|w| w[0] < w[1]),
                "a producer's cursors increase"
            );
        }
        let all = store.read_thread("t", "a", "k", None, 10_000).await.unwrap();
        assert_eq!(all.len(), 800);
        for p in 0..8 {
            let seqs: Vec<u64> = all
                .iter()
                .filter(|e| e.run_id == format!("run-{p}"))
                .map(|e| e.seq)
                .collect();
            assert_eq!(seqs, (0..100).collect::<Vec<_>>(), "run-{p} is stored in order");
        }
    }

    #[tokio::test]
    async fn one_bad_event_fails_alone() {
        let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
        store.append_events(vec![event("dup", 0)]).await.unwrap();
        let writer = EventWriter::spawn(store.clone(), 16);
        let (a, b, c) = tokio::join!(
            writer.append(event("ok", 0)),
            writer.append(event("dup", 0)),
            writer.append(event("ok", 1))
        );
        assert!(a.is_ok() && c.is_ok(), "{a:?} {c:?}");
        assert!(matches!(b, Err(StoreError::Conflict { .. })), "{b:?}");
        assert_eq!(store.read_run("t", "ok", None, 10).await.unwrap().len(), 2);
    }
}
