//! Standby: a server-lifetime conversation handle on a thread.
//!
//! While an execution is active, message-only sends join it as supplemental input; while idle, a
//! send starts an execution. A send with any execution option queues a separate execution. `cancel`
//! stops current processing, fails queued input with `cancelled` outcomes and keeps accepting. One
//! live handle per Agent/tenant/key (the tenant the thread's rows use, whatever the identity shape):
//! asking again returns the existing one, and task sends on that thread are refused with the busy
//! error while it lives. The Standby holds the thread's store lease for its whole life, idle or not,
//! so another process on the same store is excluded too; its executions run under that lease, and a
//! failed release is reported with a `thread.ownership` notice. A failed execution does not end the
//! Standby; a rate-limit/network/provider-server failure with undelivered input is retried once, with
//! the failed execution's options, after a delay that blocks nothing; undelivered `run_failed` input
//! otherwise carries into the next execution under its original ids, and input that cannot join an
//! execution starts its own. Input waiting for space in the current execution's queue (a host's
//! send, or carried input beyond `MaxPending`) holds up neither cancel, lease renewal nor shutdown:
//! later input waits behind it, in order, and cancel fails it. Closing the Agent ends the Standby.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chrono::Utc;
use futures::StreamExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::error::{Error, FailureReason, MessageError, MessageErrorKind, ThreadErrorKind};
use super::event::{Event, EventMeta, MessageUpdate, Payload};
use super::options::{CallOptions, MessageOptions};
use super::result::MessageState;
use super::stream::{RunOutcome, Stream};
use super::thread::{Thread, lease_target};
use crate::driver::{Author, MessageFailure, Notice, Timing, notice_kind};
use crate::store::{Lease, ThreadStore};

/// Delay before the single automatic retry when the failure carried no retry-after hint.
const RETRY_FALLBACK: Duration = Duration::from_secs(2);
/// Upper bound on a provider's retry-after hint.
const RETRY_MAX: Duration = Duration::from_secs(60);
/// Events waiting for the consumer of [`Standby::events`], at most. Beyond that the forwarder
/// waits and the execution's own bounded buffer applies (§6.3: content drops, counted, or blocking
/// mode waits), so a slow consumer never grows memory.
pub const STANDBY_EVENT_BUFFER: usize = 256;
/// Executions waiting for the consumer of [`Standby::executions`], at most.
const EXECUTION_BUFFER: usize = 16;

/// Where a send's answer goes.
type Reply = oneshot::Sender<Result<String, MessageError>>;

enum Command {
    Send {
        text: String,
        opts: CallOptions,
        reply: Reply,
    },
    Cancel,
}

/// Input waiting for space in the current execution's queue (its `MaxPending` reached): a host's
/// message-only send, or carried input joining the execution it starts. The worker keeps serving
/// cancel, lease renewal and shutdown meanwhile; later input waits behind it, in order.
struct Parked {
    input: Input,
    /// In a mutex only so the worker stays `Sync`; polled through `get_mut`, never locked.
    admission: Mutex<futures::future::BoxFuture<'static, Result<String, MessageError>>>,
    waiter: Waiter,
}

/// Input waiting behind a parked one, or who waits for a parked admission.
enum Waiter {
    /// A host's send, answered once admitted (or refused).
    Host { opts: CallOptions, reply: Reply },
    /// Carried input of the current execution, started with these options.
    Join(CallOptions),
}

/// How a host's send was handled.
enum Sent {
    Reply(Result<String, MessageError>),
    /// Waiting for queue space.
    Waiting(
        Input,
        futures::future::BoxFuture<'static, Result<String, MessageError>>,
    ),
    /// The current execution ended first: place the send again once it is settled.
    Finished,
}

#[derive(Clone)]
struct Input {
    id: String,
    text: String,
    from: Author,
    timing: Timing,
}

/// The store lease a Standby holds on its thread for its whole life; its executions borrow it.
pub(crate) struct OwnedLease {
    lease: Mutex<Option<Lease>>,
    /// Cancelled when the lease is lost (a renewal failed) or released.
    lost: CancellationToken,
}

impl OwnedLease {
    /// The current lease, unless it was lost or released.
    pub(crate) fn current(&self) -> Option<Lease> {
        if self.lost.is_cancelled() {
            return None;
        }
        self.lease.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Cancelled when the lease is lost or released.
    pub(crate) fn lost_token(&self) -> CancellationToken {
        self.lost.clone()
    }
}

pub(crate) struct StandbyInner {
    commands: mpsc::UnboundedSender<Command>,
    events: Mutex<Option<mpsc::Receiver<Event>>>,
    executions: Mutex<Option<mpsc::Receiver<Stream>>>,
    subscribed: Arc<Subscribed>,
    /// Cancelled when the Standby ended: its lifetime ended, its Agent closed, or it could not
    /// (or can no longer) own the thread.
    ended: CancellationToken,
}

/// Which consumer the host took: the merged events, or the executions themselves.
#[derive(Default)]
struct Subscribed {
    events: std::sync::atomic::AtomicBool,
    executions: std::sync::atomic::AtomicBool,
}

/// The Standby handle. Clones share the same conversation.
#[derive(Clone)]
pub struct Standby {
    inner: Arc<StandbyInner>,
}

impl std::fmt::Debug for Standby {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Standby")
    }
}

/// Live Standby handles of an Agent, by tenant and key.
#[derive(Default)]
pub(crate) struct StandbyRegistry {
    live: Mutex<std::collections::HashMap<(String, String), Weak<StandbyInner>>>,
}

impl StandbyRegistry {
    /// True when a live Standby owns `(tenant, key)`.
    pub(crate) fn is_live(&self, tenant: &str, key: &str) -> bool {
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.get(&(tenant.to_owned(), key.to_owned()))
            .and_then(Weak::upgrade)
            .is_some_and(|s| !s.ended.is_cancelled())
    }
}

impl Standby {
    /// Sends input. `Ok` returns the message id and means admission, not delivery. The call's
    /// options other than message attributes queue a separate execution; the send bounds admission
    /// only (dropping the future after `Ok` does not withdraw the input).
    pub async fn send(&self, text: &str, opts: impl Into<CallOptions>) -> Result<String, MessageError> {
        let (reply, rx) = oneshot::channel();
        let closed = || MessageError {
            id: String::new(),
            text: text.to_owned(),
            kind: MessageErrorKind::RunFinished,
        };
        if self.inner.ended.is_cancelled() {
            return Err(closed());
        }
        self.inner
            .commands
            .send(Command::Send {
                text: text.to_owned(),
                opts: opts.into(),
                reply,
            })
            .map_err(|_| closed())?;
        rx.await.map_err(|_| closed())?
    }

    /// The event stream of every execution (each with its own `RunStarted` … `Done`, in execution
    /// order), plus the Standby's own reports outside any execution (input cancelled while no
    /// execution ran, a `thread.ownership` notice), which carry an empty run id. Single consumer:
    /// the first call takes it; events before the first call are discarded. Bounded
    /// ([`STANDBY_EVENT_BUFFER`]): a consumer that falls behind holds up the forwarding, and the
    /// execution's own backpressure applies (content drops, counted in `Dropped`).
    pub fn events(&self) -> Option<mpsc::Receiver<Event>> {
        let rx = self.inner.events.lock().unwrap_or_else(|p| p.into_inner()).take();
        if rx.is_some() {
            self.inner
                .subscribed
                .events
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        rx
    }

    /// Every execution's [`Stream`] as it starts, for a host that consumes each execution's events
    /// itself (a service recording them as runs). Single consumer; once taken, executions started
    /// later are handed over here instead of being forwarded to [`Standby::events`]. Each execution
    /// arrives already subscribed, so none of its events is lost while the host gets to
    /// [`Stream::events`] (its ordinary backpressure applies: content beyond the execution's buffer is
    /// dropped and counted).
    pub fn executions(&self) -> Option<mpsc::Receiver<Stream>> {
        let rx = self
            .inner
            .executions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if rx.is_some() {
            self.inner
                .subscribed
                .executions
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        rx
    }

    /// Cancels current processing, fails queued, carried and pending-retry input with `cancelled`
    /// outcomes (in the cancelled execution's result, or as Standby reports when none ran); the
    /// Standby keeps accepting.
    pub fn cancel(&self) {
        let _ = self.inner.commands.send(Command::Cancel);
    }

    /// True until the Standby ended (its lifetime ended, its Agent closed, or it lost the thread).
    pub fn is_live(&self) -> bool {
        !self.inner.ended.is_cancelled()
    }
}

impl Thread {
    /// Opens (or returns the live) Standby for this thread and `defaults`' identity (else the
    /// Agent's default identity). `lifetime` owns it: cancel the token to shut it down and release
    /// ownership. It takes the thread's store lease before it accepts input; when another owner
    /// holds it, the Standby ends at once (a `thread.ownership` notice says why) and its sends fail
    /// with `run_finished` — [`Thread::open_standby`] reports that as an error instead.
    pub fn standby(&self, lifetime: CancellationToken, defaults: CallOptions) -> Standby {
        self.open(lifetime, defaults).0
    }

    /// Like [`Thread::standby`], but waits until the Standby owns the thread: an error when another
    /// execution, Standby or process holds it (`thread_busy`), the store failed, or the Agent is
    /// closed.
    pub async fn open_standby(
        &self,
        lifetime: CancellationToken,
        defaults: CallOptions,
    ) -> Result<Standby, Error> {
        let (standby, ready) = self.open(lifetime, defaults);
        match ready {
            None => Ok(standby),
            Some(rx) => match rx.await {
                Ok(Ok(())) => Ok(standby),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(Error::AgentClosed),
            },
        }
    }

    /// The Standby (an existing live one, or a new one whose worker reports on `ready` once it owns
    /// the thread).
    fn open(
        &self,
        lifetime: CancellationToken,
        defaults: CallOptions,
    ) -> (Standby, Option<oneshot::Receiver<Result<(), Error>>>) {
        let agent = self.agent_ref().clone();
        let tenant = self.tenant_for(&defaults);
        let registry = agent.inner.standbys.clone();
        let key = (tenant.clone(), self.key().to_owned());
        let mut live = registry.live.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(existing) = live.get(&key).and_then(Weak::upgrade)
            && !existing.ended.is_cancelled()
        {
            return (Standby { inner: existing }, None);
        }
        let (commands, inbox) = mpsc::unbounded_channel();
        let (out_tx, out_rx) = mpsc::channel(STANDBY_EVENT_BUFFER);
        let (exec_tx, exec_rx) = mpsc::channel(EXECUTION_BUFFER);
        let subscribed = Arc::new(Subscribed::default());
        let ended = lifetime.child_token();
        let inner = Arc::new(StandbyInner {
            commands,
            events: Mutex::new(Some(out_rx)),
            executions: Mutex::new(Some(exec_rx)),
            subscribed: subscribed.clone(),
            ended: ended.clone(),
        });
        let (ready_tx, ready_rx) = oneshot::channel();
        if agent.is_closed() {
            ended.cancel();
            let _ = ready_tx.send(Err(Error::AgentClosed));
            return (Standby { inner }, Some(ready_rx));
        }
        live.insert(key, Arc::downgrade(&inner));
        drop(live);
        let owned = Arc::new(OwnedLease {
            lease: Mutex::new(None),
            lost: CancellationToken::new(),
        });
        let worker = Worker {
            thread: self.clone().standby_owned(owned.clone()),
            defaults,
            store: agent.inner.store.clone(),
            target: lease_target(&tenant, agent.name(), self.key()),
            owner: format!("standby-{}", uuid::Uuid::new_v4()),
            timing: self.lease_timing(),
            owned,
            out: out_tx,
            executions: exec_tx,
            forwarding: None,
            subscribed,
            reports: 0,
            current: None,
            queue: VecDeque::new(),
            carried: Vec::new(),
            retry: None,
            admitting: None,
            backlog: VecDeque::new(),
            requeued: 0,
        };
        let closing = agent.inner.cancel.clone();
        // On the Agent's tracker, so `Agent::close` waits for it; in the caller's span (a host's
        // standby span), so its executions' logs carry it.
        agent.inner.tracker.spawn(tracing::Instrument::in_current_span(
            worker.run(inbox, ended, closing, ready_tx),
        ));
        (Standby { inner }, Some(ready_rx))
    }
}

/// The execution a Standby is running.
struct Current {
    stream: Stream,
    /// Its input (the starting prompt first), and whether each was admitted to it.
    inputs: Vec<(Input, bool)>,
    retried: bool,
    /// Its own options (a retry reuses them).
    opts: CallOptions,
}

/// A retry waiting for its delay.
struct Retry {
    at: tokio::time::Instant,
    inputs: Vec<Input>,
    opts: CallOptions,
}

struct Worker {
    thread: Thread,
    defaults: CallOptions,
    store: Arc<dyn ThreadStore>,
    target: String,
    owner: String,
    /// The lease TTL and renewal interval.
    timing: (Duration, Duration),
    owned: Arc<OwnedLease>,
    out: mpsc::Sender<Event>,
    executions: mpsc::Sender<Stream>,
    /// The forwarder of the latest execution (or report): the next one starts forwarding after it,
    /// so the merged stream keeps execution order.
    forwarding: Option<tokio::task::JoinHandle<()>>,
    subscribed: Arc<Subscribed>,
    /// Standby-level reports sent so far (their sequence numbers).
    reports: u64,
    current: Option<Current>,
    queue: VecDeque<(Input, CallOptions)>,
    carried: Vec<Input>,
    retry: Option<Retry>,
    /// The input waiting for queue space.
    admitting: Option<Parked>,
    /// Input behind it, in order: carried input first, then host sends in arrival order.
    backlog: VecDeque<(Input, Waiter)>,
    /// Carried input requeued by the latest `start` (it goes before older queued executions).
    requeued: usize,
}

fn merged(defaults: &CallOptions, opts: CallOptions) -> CallOptions {
    let mut o = opts;
    if o.shared.identity.is_none() {
        o.shared.identity.clone_from(&defaults.shared.identity);
    }
    o
}

/// True for a run failure the Standby retries once: rate limit, network, provider server error.
fn transient_delay(outcome: &RunOutcome) -> Option<Duration> {
    let r = outcome.as_ref().err()?.as_run()?;
    let code = r.details.get("code").and_then(|v| v.as_str()).unwrap_or_default();
    matches!(code, "rate_limited" | "network_error" | "provider_server_error").then(|| {
        r.details
            .get("retry_after_ms")
            .and_then(|v| v.as_u64())
            .map(Duration::from_millis)
            .unwrap_or(RETRY_FALLBACK)
            .min(RETRY_MAX)
    })
}

impl Worker {
    fn input(text: &str, opts: &CallOptions) -> Input {
        Input {
            id: opts
                .message
                .id
                .clone()
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| format!("msg-{}", uuid::Uuid::now_v7())),
            text: text.to_owned(),
            from: opts.message.from.clone().unwrap_or_default(),
            timing: opts.message.timing,
        }
    }

    /// Starts an execution with `first` as the prompt and `rest` joined as supplemental input, in
    /// order; once one waits for queue space, the rest waits behind it. Input the execution cannot
    /// take (a timing or size it refuses, messages disabled by its options) is never dropped: it
    /// starts its own execution next, with a notice in this one.
    async fn start(&mut self, first: Input, rest: Vec<Input>, opts: CallOptions, retried: bool) {
        let run_opts = merged(&self.defaults, opts.clone())
            .message_id(first.id.clone())
            .from(first.from.clone());
        let stream = self.thread.send(&first.text, run_opts);
        self.hand_over(&stream).await;
        self.current = Some(Current {
            stream,
            inputs: vec![(first, true)],
            retried,
            opts: opts.clone(),
        });
        self.requeued = 0;
        let mut rest = rest.into_iter();
        while self.admitting.is_none()
            && let Some(m) = rest.next()
        {
            self.join(m, opts.clone()).await;
        }
        for m in rest.rev() {
            self.backlog.push_front((m, Waiter::Join(opts.clone())));
        }
    }

    /// An admission of `input` into the current execution, polled once: its outcome, or the
    /// future still waiting for queue space.
    async fn admit(
        stream: &Stream,
        input: &Input,
    ) -> Result<Result<String, MessageError>, futures::future::BoxFuture<'static, Result<String, MessageError>>>
    {
        let msg = MessageOptions::new()
            .id(input.id.clone())
            .from(input.from.clone())
            .when(input.timing);
        let stream = stream.clone();
        let body = input.text.clone();
        let mut admission: futures::future::BoxFuture<'static, _> =
            Box::pin(async move { stream.send(body, msg).await });
        match futures::poll!(&mut admission) {
            std::task::Poll::Ready(r) => Ok(r),
            std::task::Poll::Pending => Err(admission),
        }
    }

    /// Joins carried input `m` to the current execution (started with `opts`), or parks it.
    async fn join(&mut self, m: Input, opts: CallOptions) {
        let Some(cur) = &self.current else {
            self.carried.push(m);
            return;
        };
        match Self::admit(&cur.stream, &m).await {
            Ok(r) => self.joined(m, opts, r),
            Err(admission) => {
                self.admitting = Some(Parked {
                    input: m,
                    admission: Mutex::new(admission),
                    waiter: Waiter::Join(opts),
                });
            }
        }
    }

    /// Where carried input `m` went once its admission ended with `r`.
    fn joined(&mut self, m: Input, opts: CallOptions, r: Result<String, MessageError>) {
        let Some(cur) = &mut self.current else {
            self.carried.push(m);
            return;
        };
        match r {
            Ok(_) => cur.inputs.push((m, true)),
            // The execution already ended (refused, or finished at once): carried like the rest
            // of its undelivered input.
            Err(e)
                if matches!(
                    e.kind,
                    MessageErrorKind::RunFinished | MessageErrorKind::Cancelled
                ) =>
            {
                cur.inputs.push((m, false));
            }
            Err(e) => {
                cur.stream.publish_notice(
                    Notice::new(
                        notice_kind::LIFECYCLE,
                        format!(
                            "message {} cannot join this execution ({e}); it starts the next one",
                            m.id
                        ),
                    )
                    .with_meta("code", "standby_input_requeued")
                    .with_data("id", m.id.as_str())
                    .with_data("reason", e.code()),
                );
                let at = self.requeued.min(self.queue.len());
                self.queue.insert(at, (m, opts));
                self.requeued += 1;
            }
        }
    }

    /// Gives the execution's events to the host: the execution itself when it took
    /// [`Standby::executions`], else its events forwarded in order into the bounded merged stream
    /// (discarded until someone subscribes), the forwarder waiting whenever the consumer lags.
    ///
    /// The execution is subscribed BEFORE it is handed over: the host takes its events whenever it
    /// gets to it, while this worker asks for the execution's result at once — without the
    /// subscription first, that request would release the producers as result-only and drop every
    /// content event the host had not yet read (gaps in the sequence).
    async fn hand_over(&mut self, stream: &Stream) {
        use std::sync::atomic::Ordering::SeqCst;
        if self.subscribed.executions.load(SeqCst) {
            stream.shared.broker.subscribe();
            if self.executions.send(stream.clone()).await.is_ok() {
                return;
            }
        }
        let events = stream.events();
        self.forward(events.map(Some).boxed());
    }

    /// Chains `events` after the previous forwarder into the merged stream.
    fn forward(&mut self, mut events: futures::stream::BoxStream<'static, Option<Event>>) {
        use std::sync::atomic::Ordering::SeqCst;
        let out = self.out.clone();
        let subscribed = self.subscribed.clone();
        let previous = self.forwarding.take();
        self.forwarding = Some(tokio::spawn(async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            while let Some(e) = events.next().await {
                let Some(e) = e else { continue };
                if subscribed.events.load(SeqCst) && out.send(e).await.is_err() {
                    // The consumer is gone: drain without forwarding.
                    subscribed.events.store(false, SeqCst);
                }
            }
        }));
    }

    /// A Standby-level report (outside any execution: an empty run id), in order after what was
    /// forwarded before.
    fn report(&mut self, payloads: Vec<Payload>) {
        let key = self.thread.key().to_owned();
        let events: Vec<Option<Event>> = payloads
            .into_iter()
            .map(|payload| {
                self.reports += 1;
                Some(Event {
                    meta: EventMeta {
                        run_id: String::new(),
                        thread_key: key.clone(),
                        sequence: self.reports,
                        time: Utc::now(),
                        turn_id: String::new(),
                        source: None,
                    },
                    payload,
                })
            })
            .collect();
        self.forward(futures::stream::iter(events).boxed());
    }

    fn cancelled_update(input: &Input) -> Payload {
        Payload::MessageUpdate(MessageUpdate {
            id: input.id.clone(),
            state: MessageState::Failed,
            turn: 0,
            boundary: String::new(),
            mechanism: String::new(),
            reason: Some(MessageFailure::Cancelled),
            text: input.text.clone(),
        })
    }

    /// Handles one host send: answers it, or parks it while it waits for queue space.
    async fn handle_send(&mut self, text: String, opts: CallOptions, reply: Reply) {
        if reply.is_closed() {
            // The send's caller gave up before admission: its future bounds admission.
            return;
        }
        match self.on_send(text.clone(), opts.clone()).await {
            Sent::Reply(r) => {
                let _ = reply.send(r);
            }
            Sent::Waiting(input, admission) => {
                self.admitting = Some(Parked {
                    input,
                    admission: Mutex::new(admission),
                    waiter: Waiter::Host { opts, reply },
                });
            }
            Sent::Finished => {
                let input = Self::input(&text, &opts);
                self.backlog.push_front((input, Waiter::Host { opts, reply }));
                self.settle_current().await;
            }
        }
    }

    /// Settles the current execution (it ended): carries its input, starts the next queued one.
    async fn settle_current(&mut self) {
        if let Some(cur) = &self.current {
            let outcome = cur.stream.result().await;
            self.on_finished(outcome).await;
        }
    }

    async fn on_send(&mut self, text: String, opts: CallOptions) -> Sent {
        let input = Self::input(&text, &opts);
        let id = input.id.clone();
        if opts.has_execution_options() {
            if self.current.is_some() || self.retry.is_some() {
                self.queue.push_back((input, opts));
                return Sent::Reply(Ok(id));
            }
            let (first, rest) = self.with_carried(input);
            self.start(first, rest, opts, false).await;
            return Sent::Reply(Ok(id));
        }
        if let Some(cur) = &self.current {
            return match Self::admit(&cur.stream, &input).await {
                Ok(r) => self.admitted(input, r),
                Err(admission) => Sent::Waiting(input, admission),
            };
        }
        if let Some(retry) = &mut self.retry {
            // Joins the pending retry (it waits for the same delay).
            retry.inputs.push(input);
            return Sent::Reply(Ok(id));
        }
        let (first, rest) = self.with_carried(input);
        self.start(first, rest, CallOptions::new(), false).await;
        Sent::Reply(Ok(id))
    }

    /// The admission of a host's message-only send into the current execution ended with `r`.
    fn admitted(&mut self, input: Input, r: Result<String, MessageError>) -> Sent {
        match r {
            Ok(id) => {
                if let Some(cur) = &mut self.current {
                    cur.inputs.push((input, true));
                }
                Sent::Reply(Ok(id))
            }
            Err(e) if e.kind != MessageErrorKind::RunFinished => Sent::Reply(Err(e)),
            // Raced with the end of the execution: settle it first (its carried input and queue),
            // then place this input where it belongs now.
            Err(_) => Sent::Finished,
        }
    }

    /// The parked input's admission ended with `r`.
    async fn on_admission(&mut self, r: Result<String, MessageError>) {
        let Some(p) = self.admitting.take() else {
            return;
        };
        match p.waiter {
            Waiter::Join(opts) => self.joined(p.input, opts, r),
            Waiter::Host { opts, reply } => match self.admitted(p.input.clone(), r) {
                Sent::Reply(r) => {
                    let _ = reply.send(r);
                }
                // An ended admission never waits again.
                Sent::Waiting(..) | Sent::Finished => {
                    self.backlog.push_front((p.input, Waiter::Host { opts, reply }));
                    self.settle_current().await;
                }
            },
        }
    }

    /// Carried input (older) goes first, then `input`.
    fn with_carried(&mut self, input: Input) -> (Input, Vec<Input>) {
        let mut all = std::mem::take(&mut self.carried);
        all.push(input);
        let first = all.remove(0);
        (first, all)
    }

    /// Handles the end of the current execution: schedule the one retry, carry undelivered
    /// `run_failed` input, start the next queued execution.
    async fn on_finished(&mut self, outcome: RunOutcome) {
        let Some(cur) = self.current.take() else {
            return;
        };
        let cancelled = outcome
            .as_ref()
            .err()
            .and_then(Error::reason)
            .is_some_and(|r| r == FailureReason::Cancelled);
        // Only input that failed because the run failed carries (never cancelled, limit, rejected).
        let carry: Vec<Input> = if cancelled {
            Vec::new()
        } else {
            let result = match &outcome {
                Ok(r) => Some(r.clone()),
                Err(e) => e.as_run().map(|r| r.result.clone()),
            };
            match result {
                // Refused before admission: nothing happened, all of it carries.
                None => cur.inputs.into_iter().map(|(i, _)| i).collect(),
                Some(r) => {
                    let outcomes = r.messages();
                    let succeeded = outcome.is_ok();
                    cur.inputs
                        .into_iter()
                        .enumerate()
                        .filter(|(n, (i, admitted))| {
                            if *n == 0 {
                                return !succeeded && r.turns == 0;
                            }
                            if !admitted {
                                return true;
                            }
                            outcomes
                                .iter()
                                .find(|m| m.id == i.id)
                                .is_none_or(|m| m.reason == Some(MessageFailure::RunFailed))
                        })
                        .map(|(_, (i, _))| i)
                        .collect()
                }
            }
        };
        match transient_delay(&outcome) {
            Some(delay) if !cur.retried && !carry.is_empty() => {
                self.retry = Some(Retry {
                    at: tokio::time::Instant::now() + delay,
                    inputs: carry,
                    opts: cur.opts,
                });
                return;
            }
            _ => self.carried.extend(carry),
        }
        self.start_queued().await;
    }

    async fn start_queued(&mut self) {
        if let Some((input, opts)) = self.queue.pop_front() {
            let (first, rest) = self.with_carried(input);
            self.start(first, rest, opts, false).await;
        }
    }

    /// The pending retry's delay passed: run it once, with the failed execution's options.
    async fn on_retry(&mut self) {
        let Some(retry) = self.retry.take() else {
            return;
        };
        let mut rest = retry.inputs;
        if rest.is_empty() {
            self.start_queued().await;
            return;
        }
        let first = rest.remove(0);
        self.start(first, rest, retry.opts, true).await;
    }

    async fn on_cancel(&mut self) {
        // Input still waiting for queue space was never admitted: a host's send fails, cancelled;
        // carried input is reported with the rest.
        let mut waiting: Vec<(Input, Waiter)> = self
            .admitting
            .take()
            .map(|p| (p.input, p.waiter))
            .into_iter()
            .collect();
        waiting.extend(self.backlog.drain(..));
        let mut dropped = Vec::new();
        for (input, waiter) in waiting {
            match waiter {
                Waiter::Host { reply, .. } => {
                    let _ = reply.send(Err(MessageError {
                        id: input.id,
                        text: input.text,
                        kind: MessageErrorKind::Cancelled,
                    }));
                }
                Waiter::Join(_) => dropped.push(input),
            }
        }
        dropped.extend(self.queue.drain(..).map(|(i, _)| i));
        dropped.append(&mut self.carried);
        if let Some(retry) = self.retry.take() {
            dropped.extend(retry.inputs);
        }
        match self.current.take() {
            Some(cur) if cur.stream.try_result().is_none() => {
                // Reported in the cancelled execution's result and events.
                for i in &dropped {
                    cur.stream
                        .record_failed(&i.id, &i.text, &i.from, i.timing, MessageFailure::Cancelled);
                }
                cur.stream.cancel();
                let _ = cur.stream.result().await;
            }
            _ => {
                let reports = dropped.iter().map(Self::cancelled_update).collect::<Vec<_>>();
                if !reports.is_empty() {
                    self.report(reports);
                }
            }
        }
    }

    /// Takes the thread's store lease (no retry: a host reopens the Standby).
    async fn acquire(&self) -> Result<(), Error> {
        let (ttl, _) = self.timing;
        super::release::settle(&self.store, &self.target).await;
        let lease = self
            .store
            .acquire_lease(&self.target, &self.owner, ttl)
            .await
            .map_err(|e| match e {
                crate::store::StoreError::Busy { .. } => Error::thread(
                    ThreadErrorKind::Busy,
                    "another execution or process owns this thread",
                ),
                other => Error::thread(ThreadErrorKind::Store, other.to_string()),
            })?;
        *self.owned.lease.lock().unwrap_or_else(|p| p.into_inner()) = Some(lease);
        Ok(())
    }

    /// Renews the lease; false when it is lost.
    async fn renew(&self) -> bool {
        let (ttl, _) = self.timing;
        let Some(lease) = self.owned.current() else {
            return false;
        };
        match self.store.renew_lease(&lease, ttl).await {
            Ok(renewed) => {
                *self.owned.lease.lock().unwrap_or_else(|p| p.into_inner()) = Some(renewed);
                true
            }
            Err(_) => false,
        }
    }

    fn ownership_notice(&mut self, text: String) {
        self.report(vec![Payload::Notice(Notice::new(
            notice_kind::THREAD_OWNERSHIP,
            text,
        ))]);
    }

    /// Ends the Standby: current processing is cancelled, the lease released (a failure is a
    /// `thread.ownership` notice), the handle marked ended.
    async fn shutdown(mut self, ended: &CancellationToken) {
        ended.cancel();
        if let Some(cur) = self.current.take() {
            cur.stream.cancel();
            let _ = cur.stream.result().await;
        }
        let lease = self.owned.lease.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.owned.lost.cancel();
        if let Some(lease) = lease
            && let Err(e) = super::release::release(&self.store, &lease).await
        {
            self.ownership_notice(format!(
                "releasing the Standby's ownership of the thread failed: {e}; this process releases it \
                 before it next takes the thread, others when its lease expires"
            ));
        }
        if let Some(last) = self.forwarding.take() {
            let _ = last.await;
        }
    }

    async fn run(
        mut self,
        mut inbox: mpsc::UnboundedReceiver<Command>,
        ended: CancellationToken,
        closing: CancellationToken,
        ready: oneshot::Sender<Result<(), Error>>,
    ) {
        if let Err(e) = self.acquire().await {
            self.ownership_notice(format!("the Standby cannot own the thread: {e}"));
            let _ = ready.send(Err(e));
            self.shutdown(&ended).await;
            return;
        }
        let _ = ready.send(Ok(()));
        let (_, every) = self.timing;
        let mut renewal = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            // Sends that waited behind a parked one, in order, until one waits again.
            while self.admitting.is_none()
                && let Some((input, waiter)) = self.backlog.pop_front()
            {
                match waiter {
                    Waiter::Host { opts, reply } => self.handle_send(input.text, opts, reply).await,
                    Waiter::Join(opts) => self.join(input, opts).await,
                }
            }
            // While a send waits for queue space the execution's end is seen through that send
            // (the queue closes first), so its input is placed before the execution settles.
            let waiting = self.admitting.is_some();
            let current = &self.current;
            let finished = async move {
                match current {
                    Some(cur) if !waiting => cur.stream.result().await,
                    _ => std::future::pending().await,
                }
            };
            let parked = &mut self.admitting;
            let admission = async move {
                match parked {
                    Some(p) => {
                        let admission = p.admission.get_mut().unwrap_or_else(|p| p.into_inner());
                        match &mut p.waiter {
                            // A caller that gives up while its send waits withdraws it.
                            Waiter::Host { reply, .. } => tokio::select! {
                                r = admission => Some(r),
                                _ = reply.closed() => None,
                            },
                            Waiter::Join(_) => Some(admission.await),
                        }
                    }
                    None => std::future::pending().await,
                }
            };
            let retry_at = self.retry.as_ref().map(|r| r.at);
            let retry_due = async move {
                match retry_at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = ended.cancelled() => break,
                _ = closing.cancelled() => break,
                _ = renewal.tick() => {
                    if !self.renew().await {
                        self.owned.lost.cancel();
                        self.ownership_notice(
                            "the Standby lost its ownership lease of the thread; it ends".into(),
                        );
                        break;
                    }
                }
                cmd = inbox.recv() => match cmd {
                    None => break,
                    Some(Command::Send { text, opts, reply }) if waiting => {
                        let input = Self::input(&text, &opts);
                        self.backlog.push_back((input, Waiter::Host { opts, reply }));
                    }
                    Some(Command::Send { text, opts, reply }) => {
                        self.handle_send(text, opts, reply).await;
                    }
                    Some(Command::Cancel) => self.on_cancel().await,
                },
                outcome = finished => self.on_finished(outcome).await,
                r = admission => match r {
                    Some(r) => self.on_admission(r).await,
                    None => self.admitting = None,
                },
                _ = retry_due, if self.current.is_none() => self.on_retry().await,
            }
        }
        self.shutdown(&ended).await;
    }
}
