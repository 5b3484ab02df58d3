//! One AG-UI run's stream: the execution's exposed log ([`LogTail`], the records REST SSE sends),
//! translated, onto the SSE connection, until the terminal — or until an approval parks the run
//! (interrupt and tool modes), in which case the log position is parked in the run registry for the
//! AG-UI run that resumes it.
//!
//! A closed connection (client abort) cancels the execution; shutdown cancels it and still streams
//! the terminal.

use std::sync::Arc;

use axum::response::sse::Event as SseEvent;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::data;
use super::tail::LogTail;
use crate::runs::RunEntry;
use crate::runtime::{Event, Payload};
use agent_adaptor_core::agui::interrupts::interrupt_for;
use agent_adaptor_core::agui::{AguiEvent, ApprovalMode, Outcome, Translator};

/// The forwarding task of one AG-UI run.
pub(super) struct Forward {
    /// The execution.
    pub entry: Arc<RunEntry>,
    /// Its exposed log (from the start, or from where a parked run left it).
    pub tap: LogTail,
    /// The translator of this AG-UI run.
    pub translator: Translator,
    /// How approvals end this AG-UI run.
    pub mode: ApprovalMode,
    /// The SSE connection.
    pub out: mpsc::Sender<SseEvent>,
    /// The service's shutdown.
    pub shutdown: CancellationToken,
}

enum Next {
    Event(Option<Event>),
    Closed,
    Shutdown,
}

impl Forward {
    /// Sends `events`; false (and the execution cancelled) when the client is gone.
    async fn send(&self, events: Vec<AguiEvent>) -> bool {
        for e in &events {
            if self.out.send(data(e)).await.is_err() {
                self.entry.stream.cancel();
                return false;
            }
        }
        true
    }

    /// Translates and sends one event; false when the stream is over (client gone or terminal sent).
    async fn forward(&mut self, ev: &Event) -> bool {
        let events = self.translator.event(ev);
        self.send(events).await && !self.translator.is_finished()
    }

    /// Runs the stream to its end.
    pub(super) async fn run(mut self) {
        let mut stopping = false;
        let start = self.translator.start();
        if !self.send(start).await {
            return;
        }
        let pause = loop {
            let next = tokio::select! {
                ev = self.tap.next() => Next::Event(ev),
                () = self.out.closed() => Next::Closed,
                () = self.shutdown.cancelled(), if !stopping => Next::Shutdown,
            };
            let ev = match next {
                Next::Event(Some(ev)) => ev,
                Next::Event(None) => break None,
                Next::Closed => {
                    self.entry.stream.cancel();
                    return;
                }
                Next::Shutdown => {
                    stopping = true;
                    self.entry.stream.cancel();
                    continue;
                }
            };
            let asks = matches!(ev.payload, Payload::ApprovalRequest(_));
            if !self.forward(&ev).await {
                return;
            }
            if !asks || self.mode == ApprovalMode::Stream || stopping {
                continue;
            }
            // Everything already delivered goes out first (parallel requests become one pause).
            while let Some(ev) = self.tap.try_next() {
                if !self.forward(&ev).await {
                    return;
                }
            }
            let pending = self.entry.pending_approvals();
            if pending.is_empty() {
                continue; // answered over POST meanwhile: keep streaming
            }
            break Some(match self.mode {
                ApprovalMode::Interrupt => self.translator.pause(Some(Outcome::Interrupt {
                    interrupts: pending.iter().map(interrupt_for).collect(),
                })),
                _ => self.translator.pause(None),
            });
        };
        match pause {
            Some(end) => {
                // Parked before the client can see the pause, so its resume always finds the position.
                self.entry.park(self.tap.position());
                for e in &end {
                    if self.out.send(data(e)).await.is_err() {
                        break;
                    }
                }
            }
            None if !self.translator.is_finished() => {
                let end = self
                    .translator
                    .error("internal", "the run ended without a terminal event");
                for e in &end {
                    let _ = self.out.send(data(e)).await;
                }
            }
            None => {}
        }
    }
}
