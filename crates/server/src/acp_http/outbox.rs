//! One outbound stream of an ACP HTTP connection (the connection's own, or one session's): the
//! agent's messages numbered from 1, held for one SSE receiver at a time and kept (bounded) after
//! delivery, so a receiver that reconnects with `Last-Event-ID` misses nothing. When the bound drops a
//! message nobody has read, a receiver starting before it is refused (the client reattaches with
//! `session/load`, which replays the durable log).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

/// How many messages a stream keeps.
pub const MAX_MESSAGES: usize = 4096;
/// How many bytes of messages a stream keeps.
pub const MAX_BYTES: usize = 16 * 1024 * 1024;

/// One outbound stream.
#[derive(Debug)]
pub struct Outbox {
    inner: Mutex<Inner>,
    /// The number of the newest message, or `u64::MAX` once closed.
    newest: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct Inner {
    kept: VecDeque<(u64, Arc<str>)>,
    bytes: usize,
    next: u64,
    /// The generation of the current receiver (0: none).
    receiver: u64,
    generations: u64,
    closed: bool,
}

/// Why a receiver could not attach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttachError {
    /// Another receiver is attached (and this one did not ask to resume).
    Busy,
    /// Messages after the requested one are no longer kept.
    Lost {
        /// The oldest message still kept.
        oldest: u64,
    },
}

/// A receiver attached to an [`Outbox`]; detaches when dropped.
#[derive(Debug)]
pub struct Receiver {
    outbox: Arc<Outbox>,
    generation: u64,
    after: u64,
    newest: watch::Receiver<u64>,
}

impl Default for Outbox {
    fn default() -> Self {
        Outbox {
            inner: Mutex::new(Inner {
                next: 1,
                ..Default::default()
            }),
            newest: watch::channel(0).0,
        }
    }
}

impl Outbox {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends one message; the oldest ones go beyond the bounds.
    pub fn push(&self, message: Arc<str>) {
        let seq = {
            let mut inner = self.lock();
            if inner.closed {
                return;
            }
            let seq = inner.next;
            inner.next += 1;
            inner.bytes += message.len();
            inner.kept.push_back((seq, message));
            while inner.kept.len() > MAX_MESSAGES || (inner.bytes > MAX_BYTES && inner.kept.len() > 1) {
                if let Some((_, m)) = inner.kept.pop_front() {
                    inner.bytes -= m.len();
                }
            }
            seq
        };
        self.newest.send_replace(seq);
    }

    /// Ends the stream: receivers get what is kept, then the end.
    pub fn close(&self) {
        self.lock().closed = true;
        self.newest.send_replace(u64::MAX);
    }

    /// True while a receiver is attached.
    pub fn attached(&self) -> bool {
        self.lock().receiver != 0
    }

    /// Attaches a receiver that reads the messages after `after` (0: from the first). Without
    /// `takeover`, an attached receiver makes this one [`AttachError::Busy`]; with it (a reconnect
    /// naming `Last-Event-ID`), the new receiver replaces the old, which ends.
    pub fn attach(self: &Arc<Self>, after: u64, takeover: bool) -> Result<Receiver, AttachError> {
        let mut inner = self.lock();
        if inner.receiver != 0 && !takeover {
            return Err(AttachError::Busy);
        }
        let oldest = inner.kept.front().map_or(inner.next, |(seq, _)| *seq);
        if after + 1 < oldest {
            return Err(AttachError::Lost { oldest });
        }
        inner.generations += 1;
        inner.receiver = inner.generations;
        let generation = inner.receiver;
        drop(inner);
        // Wake a replaced receiver so it sees it is no longer current.
        self.newest.send_modify(|_| {});
        Ok(Receiver {
            outbox: self.clone(),
            generation,
            after,
            newest: self.newest.subscribe(),
        })
    }
}

impl Receiver {
    /// The next message and its number; `None` once the stream is closed and read, or when a newer
    /// receiver replaced this one.
    pub async fn next(&mut self) -> Option<(u64, Arc<str>)> {
        loop {
            {
                let inner = self.outbox.lock();
                if inner.receiver != self.generation {
                    return None;
                }
                if let Some((seq, m)) = inner.kept.iter().find(|(seq, _)| *seq > self.after) {
                    self.after = *seq;
                    return Some((*seq, m.clone()));
                }
                if inner.closed {
                    return None;
                }
            }
            if self.newest.changed().await.is_err() {
                return None;
            }
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let mut inner = self.outbox.lock();
        if inner.receiver == self.generation {
            inner.receiver = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    #[tokio::test]
    async fn a_receiver_reads_in_order_and_a_resume_misses_nothing() {
        let out = Arc::new(Outbox::default());
        out.push(msg("a"));
        out.push(msg("b"));
        let mut first = out.attach(0, false).expect("attach");
        assert_eq!(first.next().await, Some((1, msg("a"))));
        assert_eq!(out.attach(0, false).unwrap_err(), AttachError::Busy);
        // A reconnect after message 1 takes over and reads 2, then what comes next.
        let mut second = out.attach(1, true).expect("takeover");
        assert_eq!(first.next().await, None, "the replaced receiver ends");
        out.push(msg("c"));
        assert_eq!(second.next().await, Some((2, msg("b"))));
        assert_eq!(second.next().await, Some((3, msg("c"))));
        out.close();
        assert_eq!(second.next().await, None);
        drop(second);
        assert!(!out.attached());
    }

    #[tokio::test]
    async fn a_resume_before_the_oldest_kept_message_is_refused() {
        let out = Arc::new(Outbox::default());
        for i in 0..(MAX_MESSAGES + 2) {
            out.push(msg(&i.to_string()));
        }
        assert_eq!(out.attach(0, false).unwrap_err(), AttachError::Lost { oldest: 3 });
        let mut r = out.attach(2, false).expect("from the oldest kept");
        assert_eq!(r.next().await.map(|(seq, _)| seq), Some(3));
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_on_a_push_and_on_close() {
        let out = Arc::new(Outbox::default());
        let mut r = out.attach(0, false).expect("attach");
        let pusher = {
            let out = out.clone();
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                out.push(Arc::from("late"));
                out.close();
            })
        };
        assert_eq!(r.next().await, Some((1, Arc::from("late"))));
        assert_eq!(r.next().await, None);
        pusher.await.expect("pusher");
    }
}
