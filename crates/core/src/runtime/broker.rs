//! The event pipeline of one execution: numbering, bounded buffering, drop accounting and the
//! terminal sequence.
//!
//! Model: a consumer-visible buffer of `capacity` events (ordinary and critical alike) and an
//! overflow queue for critical events that found it full. Ordinary events never enter the
//! overflow: with the buffer full (or the overflow non-empty, to keep order) they are dropped and
//! aggregated into a pending `Dropped` marker that is numbered when its first drop happens and
//! waits in the overflow like a critical event. In blocking mode ordinary producers wait for
//! room instead, until the consumer goes away (result-only) or the execution is cancelled.
//! Critical events never block and are never dropped — except that a cancelled execution
//! discards what is still in the overflow and counts it in one final `Dropped`.
//! The terminal sequence (final `Dropped`, `RunFinished`, `Done`) bypasses the capacity.

use std::collections::{BTreeMap, VecDeque};
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};

use chrono::Utc;
use tokio::sync::{Notify, watch};

use super::event::{Dropped, Event, EventMeta, Payload};
use crate::driver::SourceMeta;

/// Default ordinary-event capacity.
pub const DEFAULT_EVENT_BUFFER: usize = 1024;

/// Who is paying attention to the stream (approvals wait for one of these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Attention {
    /// `events()` was called.
    pub subscribed: bool,
    /// `result()` was called before any `events()`.
    pub result_only: bool,
}

enum Slot {
    Event(Event),
    Marker,
}

#[derive(Default)]
struct DropAgg {
    marker_seq: u64,
    count: u64,
    by_kind: BTreeMap<String, u64>,
    first: u64,
    last: u64,
}

impl DropAgg {
    fn add(&mut self, kind: &str, seq: u64) {
        self.count += 1;
        *self.by_kind.entry(kind.to_owned()).or_default() += 1;
        if self.first == 0 || seq < self.first {
            self.first = seq;
        }
        self.last = self.last.max(seq);
    }

    fn merge(&mut self, other: DropAgg) {
        self.count += other.count;
        for (k, v) in other.by_kind {
            *self.by_kind.entry(k).or_default() += v;
        }
        if other.first != 0 && (self.first == 0 || other.first < self.first) {
            self.first = other.first;
        }
        self.last = self.last.max(other.last);
    }
}

struct State {
    seq: u64,
    channel: VecDeque<Event>,
    overflow: VecDeque<Slot>,
    pending: Option<DropAgg>,
    attention: Attention,
    cancelled: bool,
    finished: bool,
    /// Every consumer handle waiting for the next event (all share one cursor).
    wakers: Vec<Waker>,
    turn_id: String,
}

/// The pipeline of one execution.
pub(crate) struct Broker {
    state: Mutex<State>,
    capacity: usize,
    blocking: bool,
    run_id: String,
    thread_key: String,
    room: Notify,
    attention: watch::Sender<Attention>,
    published: AtomicU64,
    dropped: AtomicU64,
}

/// Result of a non-waiting publish.
pub(crate) enum TryPublish {
    Done,
    MustWait(Payload, Option<SourceMeta>),
}

impl Broker {
    pub(crate) fn new(run_id: &str, thread_key: &str, capacity: usize, blocking: bool) -> Self {
        Broker {
            state: Mutex::new(State {
                seq: 0,
                channel: VecDeque::with_capacity(capacity.min(64)),
                overflow: VecDeque::new(),
                pending: None,
                attention: Attention::default(),
                cancelled: false,
                finished: false,
                wakers: Vec::new(),
                turn_id: String::new(),
            }),
            capacity: capacity.max(1),
            blocking,
            run_id: run_id.to_owned(),
            thread_key: thread_key.to_owned(),
            room: Notify::new(),
            attention: watch::channel(Attention::default()).0,
            published: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stamp(&self, st: &mut State, payload: Payload, source: Option<SourceMeta>) -> Event {
        st.seq += 1;
        Event {
            meta: EventMeta {
                run_id: self.run_id.clone(),
                thread_key: self.thread_key.clone(),
                sequence: st.seq,
                time: Utc::now(),
                turn_id: st.turn_id.clone(),
                source,
            },
            payload,
        }
    }

    fn wake(st: &mut State) {
        for w in st.wakers.drain(..) {
            w.wake();
        }
    }

    fn push_visible(&self, st: &mut State, ev: Event) {
        if st.overflow.is_empty() && st.channel.len() < self.capacity {
            st.channel.push_back(ev);
        } else {
            st.overflow.push_back(Slot::Event(ev));
        }
    }

    fn drop_ordinary(&self, st: &mut State, kind: &'static str) {
        st.seq += 1;
        let seq = st.seq;
        self.dropped.fetch_add(1, Ordering::Relaxed);
        if st.pending.is_none() {
            st.seq += 1;
            st.pending = Some(DropAgg {
                marker_seq: st.seq,
                ..Default::default()
            });
            st.overflow.push_back(Slot::Marker);
        }
        if let Some(agg) = st.pending.as_mut() {
            agg.add(kind, seq);
        }
    }

    /// Sets the turn id stamped on later events.
    pub(crate) fn set_turn(&self, turn: u32) {
        self.lock().turn_id = turn.to_string();
    }

    /// Publishes a critical event: never blocks, never dropped (until a cancelled finish).
    pub(crate) fn publish_critical(&self, payload: Payload, source: Option<SourceMeta>) {
        let mut st = self.lock();
        if st.finished {
            return;
        }
        let ev = self.stamp(&mut st, payload, source);
        self.push_visible(&mut st, ev);
        self.published.fetch_add(1, Ordering::Relaxed);
        Self::wake(&mut st);
    }

    /// Publishes any event without waiting. Ordinary events are dropped when there is no room,
    /// except in blocking mode with an active consumer, where the caller must wait.
    pub(crate) fn try_publish(&self, payload: Payload, source: Option<SourceMeta>) -> TryPublish {
        if !payload.is_droppable() {
            self.publish_critical(payload, source);
            return TryPublish::Done;
        }
        let mut st = self.lock();
        if st.finished {
            return TryPublish::Done;
        }
        let room = st.overflow.is_empty() && st.channel.len() < self.capacity;
        let released = st.attention.result_only || st.cancelled;
        if room && !st.attention.result_only {
            let ev = self.stamp(&mut st, payload, source);
            st.channel.push_back(ev);
            self.published.fetch_add(1, Ordering::Relaxed);
            Self::wake(&mut st);
            return TryPublish::Done;
        }
        if self.blocking && !released {
            return TryPublish::MustWait(payload, source);
        }
        self.drop_ordinary(&mut st, payload.kind_label());
        Self::wake(&mut st);
        TryPublish::Done
    }

    /// Publishes, waiting for room in blocking mode.
    pub(crate) async fn publish(&self, mut payload: Payload, mut source: Option<SourceMeta>) {
        loop {
            let notified = self.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.try_publish(payload, source) {
                TryPublish::Done => return,
                TryPublish::MustWait(p, s) => {
                    payload = p;
                    source = s;
                }
            }
            notified.await;
        }
    }

    /// Marks the consumer as subscribed.
    pub(crate) fn subscribe(&self) {
        let mut st = self.lock();
        st.attention.subscribed = true;
        let a = st.attention;
        drop(st);
        self.attention.send_replace(a);
    }

    /// `result()` was called: without a subscriber, release ordinary producers.
    pub(crate) fn result_requested(&self) {
        let mut st = self.lock();
        if !st.attention.subscribed && !st.attention.result_only {
            st.attention.result_only = true;
            let a = st.attention;
            drop(st);
            self.attention.send_replace(a);
            self.room.notify_waiters();
        }
    }

    /// Watch who pays attention.
    pub(crate) fn attention(&self) -> watch::Receiver<Attention> {
        self.attention.subscribe()
    }

    /// The execution is being cancelled: ordinary producers stop waiting.
    pub(crate) fn cancel(&self) {
        self.lock().cancelled = true;
        self.room.notify_waiters();
    }

    /// Appends the terminal sequence. With `discard`, critical events still in the overflow are
    /// discarded and counted in one final `Dropped` (reason `cancelled`).
    pub(crate) fn finish(&self, terminal: Vec<Payload>, discard: bool) {
        let mut st = self.lock();
        if st.finished {
            return;
        }
        if discard {
            let mut agg = DropAgg::default();
            while let Some(slot) = st.overflow.pop_front() {
                match slot {
                    Slot::Event(ev) => agg.add(ev.payload.kind_label(), ev.meta.sequence),
                    Slot::Marker => {
                        if let Some(p) = st.pending.take() {
                            let seq = p.marker_seq;
                            agg.merge(p);
                            agg.add("dropped", seq);
                        }
                    }
                }
            }
            if let Some(p) = st.pending.take() {
                agg.merge(p);
            }
            if agg.count > 0 {
                self.dropped.fetch_add(agg.count, Ordering::Relaxed);
                let payload = Payload::Dropped(Dropped {
                    count: agg.count,
                    by_kind: agg.by_kind,
                    first_sequence: agg.first,
                    last_sequence: agg.last,
                    reason: "cancelled".into(),
                    ..Default::default()
                });
                let ev = self.stamp(&mut st, payload, None);
                st.overflow.push_back(Slot::Event(ev));
            }
        }
        for payload in terminal {
            let ev = self.stamp(&mut st, payload, None);
            self.push_visible(&mut st, ev);
        }
        st.finished = true;
        Self::wake(&mut st);
        drop(st);
        self.room.notify_waiters();
    }

    fn refill(&self, st: &mut State) {
        while st.channel.len() < self.capacity {
            match st.overflow.pop_front() {
                Some(Slot::Event(ev)) => st.channel.push_back(ev),
                Some(Slot::Marker) => {
                    if let Some(agg) = st.pending.take() {
                        let ev = Event {
                            meta: EventMeta {
                                run_id: self.run_id.clone(),
                                thread_key: self.thread_key.clone(),
                                sequence: agg.marker_seq,
                                time: Utc::now(),
                                turn_id: st.turn_id.clone(),
                                source: None,
                            },
                            payload: Payload::Dropped(Dropped {
                                count: agg.count,
                                by_kind: agg.by_kind,
                                first_sequence: agg.first,
                                last_sequence: agg.last,
                                reason: if st.attention.result_only {
                                    "result_only"
                                } else {
                                    "backpressure"
                                }
                                .into(),
                                ..Default::default()
                            }),
                        };
                        st.channel.push_back(ev);
                    }
                }
                None => break,
            }
        }
    }

    /// Polls the next event for the consumer; `None` after `Done` was delivered.
    pub(crate) fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let mut st = self.lock();
        if let Some(ev) = st.channel.pop_front() {
            self.refill(&mut st);
            drop(st);
            if self.blocking {
                self.room.notify_waiters();
            }
            return Poll::Ready(Some(ev));
        }
        if !st.overflow.is_empty() {
            self.refill(&mut st);
            if let Some(ev) = st.channel.pop_front() {
                return Poll::Ready(Some(ev));
            }
        }
        if st.finished {
            return Poll::Ready(None);
        }
        if !st.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            st.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Events published so far, and events dropped so far.
    pub(crate) fn counters(&self) -> (u64, u64) {
        (
            self.published.load(Ordering::Relaxed),
            self.dropped.load(Ordering::Relaxed),
        )
    }
}

/// The consumer side: a `futures::Stream` of events that ends after `Done`. Every handle of one
/// execution reads the same single consumer queue: an event reaches exactly one of them, in order,
/// and a handle waiting while another reads is woken, never stranded.
pub struct Events {
    broker: std::sync::Arc<Broker>,
}

impl Events {
    pub(crate) fn new(broker: std::sync::Arc<Broker>) -> Self {
        broker.subscribe();
        Events { broker }
    }

    /// The next event, or `None` after `Done`.
    pub async fn recv(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| self.broker.poll_next(cx)).await
    }
}

impl futures::Stream for Events {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.broker.poll_next(cx)
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("run_id", &self.broker.run_id)
            .finish()
    }
}
