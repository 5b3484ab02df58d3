//! The recording harness: runs a driver once with backends that record every event, claim,
//! settlement and decision, and notice anything emitted after `run` returned.

use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::RunProbe;
use crate::driver::{
    Ack, Author, Boundary, ClaimFields, ClaimedMessage, DecisionBackend, DecisionOutcome, DecisionRequest,
    DecisionSink, Driver, DriverEvent, EventSink, MessageBackend, MessagePort, Pending, Response, RunIo,
    SinkBackend, SourceMeta, Timing,
};

/// Everything observed during one invocation.
#[derive(Debug, Default, Clone)]
pub struct Recording {
    /// Events in emission order.
    pub events: Vec<DriverEvent>,
    /// Events emitted after `run` returned.
    pub late_events: usize,
    /// Boundaries claimed at (with how many messages were handed out).
    pub claims: Vec<(Boundary, usize)>,
    /// Settlements per message id.
    pub settlements: Vec<(String, Ack)>,
    /// Claims dropped without settlement.
    pub unsettled: Vec<String>,
    /// Decisions requested.
    pub decisions: Vec<DecisionRequest>,
    /// The response (`None` when the invocation timed out).
    pub response: Option<Response>,
}

#[derive(Default)]
struct Shared {
    rec: Mutex<Recording>,
    closed: std::sync::atomic::AtomicBool,
    queue: Mutex<Vec<ClaimFields>>,
}

struct Sink(Arc<Shared>);

#[async_trait::async_trait]
impl SinkBackend for Sink {
    fn try_publish(
        &self,
        event: DriverEvent,
        _source: Option<SourceMeta>,
    ) -> Result<(), Box<crate::driver::sink::Pending>> {
        let mut rec = self.0.rec.lock().unwrap_or_else(|p| p.into_inner());
        if self.0.closed.load(std::sync::atomic::Ordering::SeqCst) {
            rec.late_events += 1;
        } else {
            rec.events.push(event);
        }
        Ok(())
    }

    async fn publish(&self, event: DriverEvent, source: Option<SourceMeta>) {
        let _ = self.try_publish(event, source);
    }
}

struct Messages(Arc<Shared>);

impl MessageBackend for Messages {
    fn pending(&self) -> Pending {
        let q = self.0.queue.lock().unwrap_or_else(|p| p.into_inner());
        Pending {
            soon: q.len(),
            ..Default::default()
        }
    }

    fn claim(self: Arc<Self>, boundary: Boundary) -> Vec<ClaimedMessage> {
        let taken: Vec<ClaimFields> =
            std::mem::take(&mut *self.0.queue.lock().unwrap_or_else(|p| p.into_inner()));
        self.0
            .rec
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .claims
            .push((boundary, taken.len()));
        let backend: Arc<dyn MessageBackend> = self;
        taken
            .into_iter()
            .map(|mut f| {
                f.boundary = boundary;
                ClaimedMessage::new(f, backend.clone())
            })
            .collect()
    }

    fn settle(&self, id: &str, _boundary: Boundary, ack: Ack) {
        if let Ack::Requeue { .. } = ack {
            self.0
                .queue
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(fields(id, "requeued"));
        }
        self.0
            .rec
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .settlements
            .push((id.to_owned(), ack));
    }

    fn unsettled(&self, id: &str, _boundary: Boundary) {
        self.0
            .rec
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unsettled
            .push(id.to_owned());
    }
}

struct Decisions(Arc<Shared>);

#[async_trait::async_trait]
impl DecisionBackend for Decisions {
    async fn request(&self, request: DecisionRequest) -> DecisionOutcome {
        let kind = request.kind;
        self.0
            .rec
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .decisions
            .push(request);
        match kind {
            Some(crate::driver::DecisionKind::Question) => DecisionOutcome::Answered {
                answer: "conformance answer".into(),
                choice: None,
            },
            _ => DecisionOutcome::Approved,
        }
    }
}

fn fields(id: &str, text: &str) -> ClaimFields {
    ClaimFields {
        id: id.to_owned(),
        text: text.to_owned(),
        original: text.to_owned(),
        from: Author::default(),
        timing: Timing::Soon,
        boundary: Boundary::InTurn,
        possible_duplicate: false,
    }
}

/// Runs the driver once.
pub(super) async fn run_once(driver: Arc<dyn Driver>, probe: &RunProbe) -> Recording {
    let shared = Arc::new(Shared::default());
    if let Some(m) = &probe.message {
        shared
            .queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(fields("conformance-msg-1", m));
    }
    let (_tx, rx) = watch::channel(0u64);
    let io = RunIo {
        events: EventSink::new(Arc::new(Sink(shared.clone()))),
        messages: Some(MessagePort::new(Arc::new(Messages(shared.clone())), rx)),
        decisions: DecisionSink::new(Arc::new(Decisions(shared.clone()))),
        cancel: CancellationToken::new(),
    };
    let cancel = io.cancel.clone();
    let response = match tokio::time::timeout(probe.timeout, driver.run((probe.request)(), io)).await {
        Ok(r) => Some(r),
        Err(_) => {
            cancel.cancel();
            None
        }
    };
    shared.closed.store(true, std::sync::atomic::Ordering::SeqCst);
    // Give stray tasks a moment to reveal late emissions.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let mut rec = shared.rec.lock().unwrap_or_else(|p| p.into_inner()).clone();
    rec.response = response;
    rec
}
