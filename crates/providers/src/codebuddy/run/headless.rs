//! The headless transport: one `--print` process per provider turn; held input continues the session with
//! `--resume` in a new process.

use crate::driver::{Boundary, ClaimedMessage, FailureCode};

use super::turn::{self, TurnEnd};
use super::{Exec, settle_claims};

impl Exec<'_> {
    pub(super) async fn headless(&mut self) {
        // A thread's kept control process would miss this run's turns.
        self.evict_resident().await;
        let mut resume = self.session_plan().map(|(id, f)| (id.to_owned(), f));
        let mut prompt = self.req.prompt.clone();
        let mut claims: Vec<ClaimedMessage> = Vec::new();
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
            let turn = turn::drive(
                &mut proc,
                &mut self.tr,
                self.io,
                self.config.settle_timeout(),
                false,
            )
            .await;
            self.close_turn(&turn).await;
            let cancelled = matches!(turn.end, TurnEnd::Cancelled);
            let exit = match turn.end {
                TurnEnd::Result(_) | TurnEnd::Error(_) | TurnEnd::Closed => proc.finish(self.grace()).await,
                _ => proc.stop(self.grace(), false).await,
            };
            self.collect(&mut proc, exit);
            let go_on = self.verdict(&turn);
            if cancelled || !go_on || !self.exit.is_some_and(|e| e.success()) {
                if !cancelled && go_on {
                    let e = self.exit.unwrap_or_default();
                    self.fail(
                        FailureCode::AgentError,
                        format!("CodeBuddy exited abnormally ({:?}/{:?})", e.code, e.signal),
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
