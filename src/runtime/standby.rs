//! Standby: a server-lifetime conversation handle on a thread.
//!
//! While an execution is active, message-only sends join it as supplemental input; while idle, a
//! send starts an execution. A send with any execution option queues a separate execution. `cancel`
//! stops current processing, drops queued input and keeps accepting. One live handle per
//! Agent/tenant/key: asking again returns the existing one, and task sends on that thread are
//! refused with the busy error while it lives. A failed execution does not end the Standby; a
//! rate-limit/network/provider-server failure with undelivered input is retried once; undelivered
//! input otherwise carries into the next execution under its original ids.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::error::{MessageError, MessageErrorKind};
use super::event::Event;
use super::options::{CallOptions, MessageOptions};
use super::result::MessageState;
use super::stream::{RunOutcome, Stream};
use super::thread::Thread;
use crate::driver::{Author, Timing};

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

enum Command {
    Send {
        text: String,
        opts: CallOptions,
        reply: oneshot::Sender<Result<String, MessageError>>,
    },
    Cancel,
}

#[derive(Clone)]
struct Input {
    id: String,
    text: String,
    from: Author,
    timing: Timing,
}

pub(crate) struct StandbyInner {
    commands: mpsc::UnboundedSender<Command>,
    events: Mutex<Option<mpsc::Receiver<Event>>>,
    executions: Mutex<Option<mpsc::Receiver<Stream>>>,
    subscribed: Arc<Subscribed>,
    lifetime: CancellationToken,
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
            .is_some_and(|s| !s.lifetime.is_cancelled())
    }
}

impl Standby {
    /// Sends input. `Ok` returns the message id and means admission, not delivery.
    pub async fn send(&self, text: &str, opts: impl Into<CallOptions>) -> Result<String, MessageError> {
        let (reply, rx) = oneshot::channel();
        let closed = || MessageError {
            id: String::new(),
            text: text.to_owned(),
            kind: MessageErrorKind::RunFinished,
        };
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
    /// order). Single consumer: the first call takes it; events before the first call are discarded.
    /// Bounded ([`STANDBY_EVENT_BUFFER`]): a consumer that falls behind holds up the forwarding, and the
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
    /// later are handed over here instead of being forwarded to [`Standby::events`].
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

    /// Cancels current processing and queued input; the Standby keeps accepting.
    pub fn cancel(&self) {
        let _ = self.inner.commands.send(Command::Cancel);
    }

    /// True until the lifetime token is cancelled.
    pub fn is_live(&self) -> bool {
        !self.inner.lifetime.is_cancelled()
    }
}

impl Thread {
    /// Opens (or returns the live) Standby for this thread and `tenant_opts`' identity. `lifetime`
    /// owns it: cancel the token to shut it down and release ownership.
    pub fn standby(&self, lifetime: CancellationToken, defaults: CallOptions) -> Standby {
        let tenant = defaults
            .shared
            .identity
            .as_ref()
            .map(|i| i.tenant.clone())
            .unwrap_or_default();
        let registry = self.agent_ref().inner.standbys.clone();
        let key = (tenant, self.key().to_owned());
        let mut live = registry.live.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(existing) = live.get(&key).and_then(Weak::upgrade)
            && !existing.lifetime.is_cancelled()
        {
            return Standby { inner: existing };
        }
        let (commands, inbox) = mpsc::unbounded_channel();
        let (out_tx, out_rx) = mpsc::channel(STANDBY_EVENT_BUFFER);
        let (exec_tx, exec_rx) = mpsc::channel(EXECUTION_BUFFER);
        let subscribed = Arc::new(Subscribed::default());
        let inner = Arc::new(StandbyInner {
            commands,
            events: Mutex::new(Some(out_rx)),
            executions: Mutex::new(Some(exec_rx)),
            subscribed: subscribed.clone(),
            lifetime: lifetime.clone(),
        });
        live.insert(key, Arc::downgrade(&inner));
        drop(live);
        let worker = Worker {
            thread: self.clone().standby_owned(),
            defaults,
            out: out_tx,
            executions: exec_tx,
            forwarding: None,
            subscribed,
            current: None,
            queue: VecDeque::new(),
            carried: Vec::new(),
        };
        // In the caller's span (a host's standby span), so its executions' logs carry it.
        tokio::spawn(tracing::Instrument::in_current_span(worker.run(inbox, lifetime)));
        Standby { inner }
    }
}

struct Worker {
    thread: Thread,
    defaults: CallOptions,
    out: mpsc::Sender<Event>,
    executions: mpsc::Sender<Stream>,
    /// The forwarder of the latest execution: the next one starts forwarding after it, so the
    /// merged stream keeps execution order.
    forwarding: Option<tokio::task::JoinHandle<()>>,
    subscribed: Arc<Subscribed>,
    current: Option<(Stream, Vec<Input>, bool)>,
    queue: VecDeque<(Input, CallOptions)>,
    carried: Vec<Input>,
}

fn merged(defaults: &CallOptions, opts: CallOptions) -> CallOptions {
    let mut o = opts;
    if o.shared.identity.is_none() {
        o.shared.identity.clone_from(&defaults.shared.identity);
    }
    o
}

impl Worker {
    fn input(text: &str, opts: &CallOptions) -> Input {
        Input {
            id: opts
                .message
                .id
                .clone()
                .unwrap_or_else(|| format!("msg-{}", uuid::Uuid::now_v7())),
            text: text.to_owned(),
            from: opts.message.from.clone().unwrap_or_default(),
            timing: opts.message.timing,
        }
    }

    /// Starts an execution with `first` as the prompt and `rest` joined as supplemental input.
    async fn start(&mut self, first: Input, rest: Vec<Input>, opts: CallOptions, retried: bool) {
        let opts = merged(&self.defaults, opts)
            .message_id(first.id.clone())
            .from(first.from.clone());
        let stream = self.thread.send(&first.text, opts);
        for m in &rest {
            let _ = stream
                .send(
                    m.text.clone(),
                    MessageOptions::new().id(m.id.clone()).from(m.from.clone()),
                )
                .await;
        }
        let mut inputs = vec![first];
        inputs.extend(rest);
        self.hand_over(&stream).await;
        self.current = Some((stream, inputs, retried));
    }

    /// Gives the execution's events to the host: the execution itself when it took
    /// [`Standby::executions`], else its events forwarded in order into the bounded merged stream
    /// (discarded until someone subscribes), the forwarder waiting whenever the consumer lags.
    async fn hand_over(&mut self, stream: &Stream) {
        use std::sync::atomic::Ordering::SeqCst;
        if self.subscribed.executions.load(SeqCst) && self.executions.send(stream.clone()).await.is_ok() {
            return;
        }
        let out = self.out.clone();
        let subscribed = self.subscribed.clone();
        let previous = self.forwarding.take();
        let mut events = stream.events();
        self.forwarding = Some(tokio::spawn(async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            while let Some(e) = events.next().await {
                if subscribed.events.load(SeqCst) && out.send(e).await.is_err() {
                    // The consumer is gone: drain without forwarding.
                    subscribed.events.store(false, SeqCst);
                }
            }
        }));
    }

    async fn on_send(&mut self, text: String, opts: CallOptions) -> Result<String, MessageError> {
        let input = Self::input(&text, &opts);
        if opts.has_execution_options() {
            if self.current.is_some() {
                let id = input.id.clone();
                self.queue.push_back((input, opts));
                return Ok(id);
            }
            let id = input.id.clone();
            let (first, rest) = self.with_carried(input);
            self.start(first, rest, opts, false).await;
            return Ok(id);
        }
        if let Some((stream, inputs, _)) = &mut self.current {
            let msg = MessageOptions::new()
                .id(input.id.clone())
                .from(input.from.clone())
                .when(input.timing);
            match stream.send(text.clone(), msg).await {
                Ok(id) => {
                    inputs.push(input);
                    return Ok(id);
                }
                Err(e) if e.kind != MessageErrorKind::RunFinished => return Err(e),
                Err(_) => {} // raced with the end of the execution: start a new one below
            }
        }
        let id = input.id.clone();
        let (first, rest) = self.with_carried(input);
        self.start(first, rest, CallOptions::new(), false).await;
        Ok(id)
    }

    /// Carried input (older) goes first, then `input`.
    fn with_carried(&mut self, input: Input) -> (Input, Vec<Input>) {
        let mut all = std::mem::take(&mut self.carried);
        all.push(input);
        let first = all.remove(0);
        (first, all)
    }

    /// Handles the end of the current execution: retry once, carry undelivered input, start the
    /// next queued execution.
    async fn on_finished(&mut self, outcome: RunOutcome) {
        let Some((_, inputs, retried)) = self.current.take() else {
            return;
        };
        let undelivered: Vec<Input> = match &outcome {
            Ok(r) => {
                let failed: Vec<String> = r.undelivered().into_iter().map(|m| m.id).collect();
                inputs.into_iter().filter(|i| failed.contains(&i.id)).collect()
            }
            Err(e) => {
                let partial = e.as_run().map(|r| r.result.clone());
                let delivered: Vec<String> = partial
                    .map(|r| {
                        let mut d: Vec<String> = r
                            .messages()
                            .into_iter()
                            .filter(|m| m.state == MessageState::Delivered)
                            .map(|m| m.id)
                            .collect();
                        if r.turns > 0 {
                            d.extend(inputs.first().map(|i| i.id.clone()));
                        }
                        d
                    })
                    .unwrap_or_default();
                inputs
                    .into_iter()
                    .filter(|i| !delivered.contains(&i.id))
                    .collect()
            }
        };
        let transient = outcome.as_ref().err().and_then(|e| e.as_run()).and_then(|r| {
            let code = r.details.get("code").and_then(|v| v.as_str()).unwrap_or_default();
            matches!(code, "rate_limited" | "network_error" | "provider_server_error").then(|| {
                r.details
                    .get("retry_after_ms")
                    .and_then(|v| v.as_u64())
                    .map(Duration::from_millis)
                    .unwrap_or(RETRY_FALLBACK)
                    .min(RETRY_MAX)
            })
        });
        match transient {
            Some(delay) if !retried && !undelivered.is_empty() => {
                tokio::time::sleep(delay).await;
                let mut rest = undelivered;
                let first = rest.remove(0);
                self.start(first, rest, CallOptions::new(), true).await;
                return;
            }
            _ => self.carried.extend(undelivered),
        }
        if let Some((input, opts)) = self.queue.pop_front() {
            let (first, rest) = self.with_carried(input);
            self.start(first, rest, opts, false).await;
        }
    }

    async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Command>, lifetime: CancellationToken) {
        loop {
            let finished = async {
                match &self.current {
                    Some((s, _, _)) => s.result().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = lifetime.cancelled() => {
                    if let Some((s, _, _)) = &self.current {
                        s.cancel();
                        let _ = s.result().await;
                    }
                    return;
                }
                cmd = inbox.recv() => match cmd {
                    None => return,
                    Some(Command::Send { text, opts, reply }) => {
                        let r = self.on_send(text, opts).await;
                        let _ = reply.send(r);
                    }
                    Some(Command::Cancel) => {
                        self.queue.clear();
                        self.carried.clear();
                        if let Some((s, _, _)) = self.current.take() {
                            s.cancel();
                            let _ = s.result().await;
                        }
                    }
                },
                outcome = finished => self.on_finished(outcome).await,
            }
        }
    }
}
