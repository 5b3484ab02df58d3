//! The one-shot transport: one `-p` process per provider turn (the prompt as the last argument); queued
//! input continues the session with `--resume` in a new process.

use crate::driver::{Boundary, ClaimedMessage, FailureCode};

use super::turn::{self, TurnCtx, TurnEnd};
use super::{Exec, settle_claims};

impl Exec<'_> {
    pub(super) async fn oneshot(&mut self) {
        self.evict_resident().await;
        let mut resume = self.session_plan().map(|(id, f)| (id.to_owned(), f));
        let mut prompt = self.req.prompt.clone();
        let mut claims: Vec<ClaimedMessage> = Vec::new();
        let mut seq = 0u64;
        loop {
            let proc = self
                .launch(
                    resume.as_ref().map(|(id, f)| (id.as_str(), *f)),
                    Some(&prompt),
                    false,
                )
                .await;
            settle_claims(std::mem::take(&mut claims), proc.is_some(), "resume");
            let Some(mut proc) = proc else { return };
            let mut ctx = TurnCtx {
                io: self.io,
                inflight: &mut self.inflight,
                live_messages: false,
                seq: &mut seq,
                mcp: &self.req.mcp,
            };
            let turn = turn::drive(&mut proc, &mut self.tr, &mut ctx).await;
            self.close_turn(&turn).await;
            let cancelled = matches!(turn.end, TurnEnd::Cancelled);
            let exit = match turn.end {
                TurnEnd::Result(_) | TurnEnd::Closed => proc.finish(self.grace()).await,
                TurnEnd::Cancelled | TurnEnd::McpRequired(_) => proc.stop(self.grace(), false).await,
            };
            self.collect(&mut proc, exit);
            let go_on = self.verdict(&turn);
            if cancelled || !go_on || !self.exit.is_some_and(|e| e.success()) {
                if !cancelled && go_on {
                    let e = self.exit.unwrap_or_default();
                    let tail = String::from_utf8_lossy(&self.raw.stderr).trim().to_owned();
                    self.fail(
                        FailureCode::AgentError,
                        format!("Claude exited abnormally ({:?}/{:?}): {tail}", e.code, e.signal),
                    );
                }
                return;
            }
            let Some(sid) = self.tr.session_id().map(str::to_owned) else {
                return;
            };
            match self.claim(Boundary::TurnEnd) {
                Some((p, c)) => {
                    resume = Some((sid, false));
                    prompt = p;
                    claims = c;
                }
                None => return,
            }
        }
    }
}
