//! Which Codex transport carries a request (pure): `codex app-server` (JSON-RPC: deltas, approvals,
//! questions, steer, interrupt, threads kept warm) or `codex exec --json` (one process per turn, no
//! deltas, and Codex's own approval policy is always `never`: every escalation request is refused by
//! Codex itself, nothing reaches the host).
//!
//! The rule (`docs/providers/codex-driver.md`, "Transport rule"):
//!
//! * `transport = "app_server"`: always app-server.
//! * `transport = "exec"`: exec, unless the request needs something exec cannot do: a decision that
//!   asks the host (permission `Ask`), Plan collaboration mode (questions), or a fork. Those are refused
//!   before launch ([`Refusal`]), never silently moved to the other transport.
//! * `transport = "auto"` (the default): exec only when it is *indistinguishable in outcome* from
//!   app-server, i.e. all of:
//!   1. a direct run (no thread key: a thread keeps its app-server warm for the next run, and resumes
//!      and forks only happen on threads);
//!   2. supplemental messages are disabled for the run (nothing can be steered in or interrupt it);
//!   3. no Plan mode (no questions);
//!   4. every request Codex could raise would be answered the way exec's `never` answers it: refused,
//!      with the model carrying on — permission `AutoDeny` with the rejection fallback `Continue`.
//!      `AutoApprove` does not qualify: app-server approves an escalation, exec refuses it (Codex
//!      rejects `require_escalated` under any policy but `on-request`, even in `danger-full-access`).
//!
//!   Everything else uses app-server.

use serde::{Deserialize, Serialize};

use crate::driver::{DecisionKind, DecisionMode, FallbackAction, Policy};

/// The configured transport preference (`CodexConfig::transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportPreference {
    /// exec where it is indistinguishable from app-server, else app-server.
    #[default]
    Auto,
    /// Always `codex app-server`.
    AppServer,
    /// `codex exec --json` wherever it can carry the request; other requests are refused.
    Exec,
}

/// The transport of one invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// `codex app-server --listen stdio://`.
    AppServer,
    /// `codex exec --json`.
    Exec,
}

impl Transport {
    /// The name reported in the result metadata (`transport`).
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::AppServer => "app-server",
            Transport::Exec => "exec",
        }
    }
}

/// What the rule looks at, taken from the configuration and the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Facts {
    /// The request runs on a thread (`Request::thread_key`).
    pub on_thread: bool,
    /// The session plan is a fork.
    pub fork: bool,
    /// Supplemental messages may be sent to the run (`RunIo::messages` is present).
    pub messages: bool,
    /// `CodexConfig::plan_mode`.
    pub plan_mode: bool,
    /// The effective permission mode.
    pub permission: Option<DecisionMode>,
    /// The effective rejection fallback.
    pub on_reject: FallbackAction,
}

impl Facts {
    /// The facts of `policy` (the other fields are set by the caller).
    pub fn of_policy(policy: &Policy) -> Facts {
        Facts {
            permission: Some(policy.approvals.effective_mode(DecisionKind::Permission)),
            on_reject: policy.approvals.effective_on_reject(),
            ..Default::default()
        }
    }

    fn asks(&self) -> bool {
        self.permission.is_none_or(|m| m == DecisionMode::Ask)
    }

    /// Codex's `never` gives the answer the policy would: refused, the model continues.
    fn never_matches_policy(&self) -> bool {
        self.permission == Some(DecisionMode::AutoDeny) && self.on_reject == FallbackAction::Continue
    }
}

/// Why a request cannot run on the transport the configuration forces.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("transport = \"exec\" cannot carry this request: {0}")]
pub struct Refusal(pub &'static str);

/// The transport for `facts` under `pref` (see the module docs).
pub fn select(pref: TransportPreference, facts: &Facts) -> Result<Transport, Refusal> {
    match pref {
        TransportPreference::AppServer => Ok(Transport::AppServer),
        TransportPreference::Exec => {
            if facts.fork {
                Err(Refusal("a fork needs app-server (thread/fork)"))
            } else if facts.plan_mode {
                Err(Refusal("Plan mode questions need app-server"))
            } else if facts.asks() {
                Err(Refusal(
                    "permission Ask needs app-server (exec's approval policy is always never)",
                ))
            } else {
                Ok(Transport::Exec)
            }
        }
        TransportPreference::Auto => {
            let exec = !facts.on_thread
                && !facts.fork
                && !facts.messages
                && !facts.plan_mode
                && facts.never_matches_policy();
            Ok(if exec {
                Transport::Exec
            } else {
                Transport::AppServer
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{ApprovalMode, ApprovalPolicy};

    fn policy(permission: ApprovalMode, on_reject: FallbackAction) -> Policy {
        Policy::default().with_approvals(ApprovalPolicy {
            permission,
            on_reject,
            ..Default::default()
        })
    }

    /// A direct run without messages whose denials continue: the one case auto sends to exec.
    fn exec_equivalent() -> Facts {
        Facts::of_policy(&policy(ApprovalMode::AutoDeny, FallbackAction::Continue))
    }

    #[test]
    fn auto_uses_exec_only_where_it_is_indistinguishable() {
        use Transport::*;
        let auto = |f: Facts| select(TransportPreference::Auto, &f).unwrap();
        assert_eq!(auto(exec_equivalent()), Exec);
        // Each condition alone sends the run to app-server.
        let cases: [(&str, Facts); 6] = [
            (
                "thread",
                Facts {
                    on_thread: true,
                    ..exec_equivalent()
                },
            ),
            (
                "fork",
                Facts {
                    fork: true,
                    ..exec_equivalent()
                },
            ),
            (
                "messages",
                Facts {
                    messages: true,
                    ..exec_equivalent()
                },
            ),
            (
                "plan mode",
                Facts {
                    plan_mode: true,
                    ..exec_equivalent()
                },
            ),
            (
                "auto-approve (exec would refuse escalations)",
                Facts::of_policy(&policy(ApprovalMode::AutoApprove, FallbackAction::Continue)),
            ),
            (
                "a denial aborts on app-server",
                Facts::of_policy(&policy(ApprovalMode::AutoDeny, FallbackAction::Inherit)),
            ),
        ];
        for (why, f) in cases {
            assert_eq!(auto(f), AppServer, "{why}");
        }
        // The default policy asks.
        assert_eq!(auto(Facts::of_policy(&Policy::default())), AppServer);
        assert_eq!(auto(Facts::default()), AppServer, "unknown permission mode");
    }

    #[test]
    fn forced_transports_carry_what_they_can_and_refuse_the_rest() {
        let app = |f: Facts| select(TransportPreference::AppServer, &f).unwrap();
        assert_eq!(app(exec_equivalent()), Transport::AppServer);
        let exec = |f: Facts| select(TransportPreference::Exec, &f);
        let approve = Facts::of_policy(&policy(ApprovalMode::AutoApprove, FallbackAction::Inherit));
        assert_eq!(exec(approve), Ok(Transport::Exec));
        let on_thread_with_messages = Facts {
            on_thread: true,
            messages: true,
            ..approve
        };
        assert_eq!(exec(on_thread_with_messages), Ok(Transport::Exec));
        for (f, what) in [
            (Facts::of_policy(&Policy::default()), "permission Ask"),
            (
                Facts {
                    fork: true,
                    ..approve
                },
                "fork",
            ),
            (
                Facts {
                    plan_mode: true,
                    ..approve
                },
                "Plan mode",
            ),
        ] {
            let e = exec(f).unwrap_err();
            assert!(e.to_string().contains(what), "{e}");
        }
    }
}
