//! Supplemental input while a turn runs.
//!
//! * `Soon` → `turn/steer {threadId, expectedTurnId, input, clientUserMessageId}`. Codex answers at
//!   once but delivers the input at its next model request (after a running tool, or by abandoning the
//!   response that is streaming); the `userMessage` item echoing the `clientId` is the delivery
//!   acknowledgement. A refused steer (`no active turn to steer`, a stale turn id) puts the input back
//!   for the turn end and stops steering for the rest of the turn.
//! * `Interrupt` → `turn/interrupt {threadId, turnId}`; once the interrupted turn's `turn/completed`
//!   arrives the claimed input starts the next turn (`turn/start`). Codex does not stop commands that
//!   are running when it interrupts, so the driver says so in a notice. Such a command is not reliably
//!   ended by the invocation's process-group stop either: a cancel during `sleep 3 && touch …` let the
//!   command finish in 5 of 13 runs (Codex appears to start commands outside app-server's group).
//! * While a server request (an approval, a question, an MCP tool elicitation) waits for its decision:
//!   `Soon` and `AfterTurn` input wait until it is answered (then `Soon` is steered in and reaches
//!   the model after the tool's result; Codex would accept the steer earlier but delivers it at the same
//!   point). `Interrupt` input withdraws the decision (the host sees the request expire), sends
//!   `turn/interrupt` — Codex then resolves its own request (`serverRequest/resolved`), the tool
//!   does not run and the model is told "aborted by user" — and starts the next turn with the input.

use crate::driver::{Ack, Boundary, ClaimedMessage, MessageFailure, Notice, notice_kind};

use super::super::wire::client::{ClientRequest, TurnSteerParams};
use super::super::wire::items::UserInput;
use super::Exec;
use super::conn::Conn;
use super::turn::CallError;

/// Input handed to `turn/steer`, waiting for its `userMessage` item.
#[derive(Debug)]
pub(super) struct Steered {
    client_id: String,
    claims: Vec<ClaimedMessage>,
}

/// The text Codex receives for `claims` (framed texts, in admission order).
pub(super) fn joined(claims: &[ClaimedMessage]) -> String {
    claims
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Settles every claim in `claims` with `ack`.
pub(super) fn settle_all(claims: Vec<ClaimedMessage>, ack: &Ack) {
    for c in claims {
        c.ack(ack.clone());
    }
}

impl Exec<'_> {
    /// Hands queued input to the running turn: interrupt-timed input interrupts it (returning the
    /// claims for the next turn), `Soon` input is steered in.
    pub(super) async fn mid_turn_input(&mut self, conn: &mut Conn) -> Option<Vec<ClaimedMessage>> {
        let port = self.io.messages.clone()?;
        if let Some(claims) = self
            .claim_interrupt(conn, "interrupting the turn to continue with new input")
            .await
        {
            return Some(claims);
        }
        if port.pending().soon > 0 && !self.steer_refused {
            let claims = port.claim(Boundary::InTurn);
            if !claims.is_empty() {
                self.steer(conn, claims).await;
            }
        }
        None
    }

    /// While a server request waits for its decision: claims queued `Interrupt` input, interrupts
    /// the turn and keeps the claims for the next turn ([`Exec::interrupted_for`]). True when it
    /// did, and the pending decision must be withdrawn.
    pub(super) async fn withdraw_for_interrupt(&mut self, conn: &mut Conn) -> bool {
        if self.interrupted_for.is_some() {
            return false;
        }
        let why = "withdrawing the pending approval and interrupting the turn to continue with new input";
        match self.claim_interrupt(conn, why).await {
            Some(claims) => {
                self.interrupted_for = Some(claims);
                true
            }
            None => false,
        }
    }

    /// Claims queued `Interrupt` input and sends `turn/interrupt` (with a notice saying why, and a
    /// warning when a command may keep running).
    async fn claim_interrupt(&mut self, conn: &mut Conn, why: &str) -> Option<Vec<ClaimedMessage>> {
        let port = self.io.messages.clone()?;
        if port.pending().interrupt == 0 {
            return None;
        }
        let claims = port.claim(Boundary::Interrupt);
        if claims.is_empty() {
            return None;
        }
        let running = self.tr.open_tools();
        let mut notice = Notice::new(notice_kind::RUNTIME, why).with_meta("source", "codex.interrupt");
        if running > 0 {
            notice = notice.with_meta(
                "warning",
                "Codex does not stop running commands on interrupt; they may keep running",
            );
        }
        self.io.events.notice(notice).await;
        self.interrupt(conn).await;
        Some(claims)
    }

    async fn steer(&mut self, conn: &mut Conn, claims: Vec<ClaimedMessage>) {
        let (Some(thread), Some(turn)) = (self.tr.thread_id(), self.tr.turn_id()) else {
            return settle_all(
                claims,
                &Ack::Requeue {
                    possible_duplicate: false,
                },
            );
        };
        self.steer_seq += 1;
        let client_id = format!("agent-adaptor-{}-{}", self.req.run_id, self.steer_seq);
        let req = ClientRequest::TurnSteer(TurnSteerParams {
            thread_id: thread.to_owned(),
            expected_turn_id: turn.to_owned(),
            input: vec![UserInput::text(joined(&claims))],
            client_user_message_id: Some(client_id.clone()),
        });
        let hs = self.config.handshake_timeout();
        match self.call(conn, req, hs).await {
            Ok(_) => {
                self.steers.push(Steered { client_id, claims });
                self.ack_steers();
            }
            Err(CallError::Rpc(e)) => {
                // The turn is ending (or another one is active): deliver at the turn end instead.
                self.steer_refused = true;
                self.io
                    .events
                    .notice(
                        Notice::new(notice_kind::RUNTIME, format!("turn/steer refused: {}", e.message))
                            .with_meta("source", "codex.steer"),
                    )
                    .await;
                settle_all(
                    claims,
                    &Ack::Requeue {
                        possible_duplicate: false,
                    },
                );
            }
            Err(CallError::Cancelled) => settle_all(claims, &Ack::Failed(MessageFailure::Cancelled)),
            Err(CallError::Broken(_)) => settle_all(claims, &Ack::Failed(MessageFailure::RunFailed)),
        }
    }

    /// Acknowledges the steered input whose `userMessage` item has arrived.
    pub(super) fn ack_steers(&mut self) {
        if self.steers.is_empty() {
            return;
        }
        let delivered = self.tr.delivered_client_ids();
        let (done, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.steers)
            .into_iter()
            .partition(|s| delivered.contains(&s.client_id));
        self.steers = waiting;
        for s in done {
            settle_all(
                s.claims,
                &Ack::Delivered {
                    mechanism: "steer".into(),
                },
            );
        }
    }

    /// Settles steered input that never showed up as a `userMessage` item when its turn ended: put
    /// back for the turn end (it may have reached Codex) or failed when the run stops.
    pub(super) fn release_steers(&mut self, ack: &Ack) {
        for s in std::mem::take(&mut self.steers) {
            settle_all(s.claims, ack);
        }
    }
}
