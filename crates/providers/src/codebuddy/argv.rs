//! The CodeBuddy command line: which transport a request needs ([`select_transport`]), the flags for it
//! ([`build`]), and the extra arguments a host may not pass because the driver owns them
//! ([`check_extra_args`]).
//!
//! Transport rule: **headless** (`--print`, one process per provider turn, the prompt as the last argument)
//! when no decision can reach the host — permission and plan review are both auto-approved and questions
//! are not asked; **control** (`--input-format=stream-json`, the `initialize` handshake, `can_use_tool`
//! answered by the driver) otherwise, which includes the default policy (permission and plan review Ask).

use std::path::Path;

use crate::driver::Policy;
use crate::stream_json::argv as shared;

use super::config::{CodeBuddyConfig, PermissionMode};

/// How the driver talks to the CLI for one invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `--print --output-format stream-json`: one process per provider turn; no decisions reach the host.
    Headless,
    /// `--input-format=stream-json --output-format=stream-json`: one process for the invocation; decisions
    /// arrive as `can_use_tool` control requests.
    Control,
}

impl Transport {
    /// A short name (`headless`, `control`).
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Headless => "headless",
            Transport::Control => "control",
        }
    }
}

/// The transport `policy` needs (see the module docs).
pub fn select_transport(policy: &Policy) -> Transport {
    if shared::nothing_can_ask(policy) {
        Transport::Headless
    } else {
        Transport::Control
    }
}

/// The `--permission-mode` value (see [`shared::permission_mode`]).
pub fn permission_mode(config: &CodeBuddyConfig, policy: &Policy) -> PermissionMode {
    shared::permission_mode(config.permission_mode, policy)
}

/// Flags the driver sets itself; a host passing one in `extra_args` is a configuration error.
pub const OWNED_FLAGS: &[&str] = &[
    "-p",
    "--print",
    "--output-format",
    "--input-format",
    "--include-partial-messages",
    "--replay-user-messages",
    "-r",
    "--resume",
    "-c",
    "--continue",
    "--fork-session",
    "--session-id",
    "--model",
    "--effort",
    "--permission-mode",
    "-y",
    "--dangerously-skip-permissions",
    "--max-turns",
    "--json-schema",
    "--append-system-prompt",
    "--system-prompt",
    "--system-prompt-file",
    "--mcp-config",
    "--strict-mcp-config",
    "--acp",
    "--acp-transport",
    "--setting-sources",
    "--serve",
    "--bg",
    "--background",
    "--remote-control",
    "-w",
    "--worktree",
    "--tmux",
    "--sandbox",
    "--swarm",
];

/// Refuses extra arguments that would override a driver-owned flag (also in `--flag=value` form).
pub fn check_extra_args(extra: &[String]) -> Result<(), String> {
    shared::check_extra_args(extra, OWNED_FLAGS, "codebuddy")
}

/// Everything one command line depends on.
#[derive(Debug, Clone, Default)]
pub struct Invocation<'a> {
    /// `--resume <id>`.
    pub resume: Option<&'a str>,
    /// With `resume`: `--fork-session`.
    pub fork: bool,
    /// `--model`.
    pub model: Option<&'a str>,
    /// `--json-schema`.
    pub schema: Option<String>,
    /// `--append-system-prompt`.
    pub instructions: Option<&'a str>,
    /// `--mcp-config <file> --strict-mcp-config`.
    pub mcp_config: Option<&'a Path>,
    /// `--allowedTools <rule>…`: permission rules pre-approved for this run (the host tools server).
    pub allowed_tools: &'a [String],
    /// Headless only: the prompt, passed after `--`.
    pub prompt: Option<&'a str>,
}

/// The arguments after the program for `transport`.
pub fn build(
    config: &CodeBuddyConfig,
    policy: &Policy,
    transport: Transport,
    inv: &Invocation<'_>,
) -> Vec<String> {
    let mut a: Vec<String> = match transport {
        Transport::Headless => vec!["--print".into(), "--output-format".into(), "stream-json".into()],
        Transport::Control => vec![
            "--input-format=stream-json".into(),
            "--output-format=stream-json".into(),
        ],
    };
    shared::push_common(
        &mut a,
        &shared::Common {
            resume: inv.resume,
            fork: inv.fork,
            permission_mode: permission_mode(config, policy),
            model: inv.model.or(config.model.as_deref()),
            effort: config.effort.map(|e| e.as_str()),
            max_turns: config.max_turns_per_run,
            schema: inv.schema.as_deref(),
            instructions: inv.instructions,
            mcp_config: inv.mcp_config,
        },
    );
    if !inv.allowed_tools.is_empty() {
        // One comma-separated value: the flag is variadic, so separate values could swallow what follows.
        a.extend(["--allowedTools".into(), inv.allowed_tools.join(",")]);
    }
    a.extend(config.common.extra_args.iter().cloned());
    if let (Transport::Headless, Some(p)) = (transport, inv.prompt) {
        a.push("--".into());
        a.push(p.to_owned());
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{ApprovalMode, ApprovalPolicy, QuestionMode};

    #[test]
    fn the_configured_model_is_the_default_and_a_call_model_replaces_it() {
        let config = CodeBuddyConfig {
            model: Some("cfg-model".into()),
            ..Default::default()
        };
        let p = policy(ApprovalPolicy::auto_approve());
        let models = |inv: &Invocation| {
            let a = build(&config, &p, Transport::Headless, inv);
            a.windows(2)
                .filter(|w| w[0] == "--model")
                .map(|w| w[1].clone())
                .collect::<Vec<_>>()
        };
        let default = Invocation {
            prompt: Some("x"),
            ..Default::default()
        };
        assert_eq!(models(&default), ["cfg-model"], "the config's model by default");
        let call = Invocation {
            prompt: Some("x"),
            model: Some("call-model"),
            ..Default::default()
        };
        assert_eq!(models(&call), ["call-model"], "a call's model replaces it");
        let none = build(&CodeBuddyConfig::default(), &p, Transport::Headless, &default);
        assert!(!none.contains(&"--model".to_string()), "no model, no flag");
    }

    fn policy(approvals: ApprovalPolicy) -> Policy {
        Policy {
            approvals,
            ..Default::default()
        }
    }

    #[test]
    fn transport_is_headless_only_when_nothing_can_ask() {
        assert_eq!(select_transport(&Policy::default()), Transport::Control);
        assert_eq!(
            select_transport(&policy(ApprovalPolicy::auto_approve())),
            Transport::Headless
        );
        let ask_questions = ApprovalPolicy {
            question: QuestionMode::Ask,
            ..ApprovalPolicy::auto_approve()
        };
        assert_eq!(select_transport(&policy(ask_questions)), Transport::Control);
        assert_eq!(
            select_transport(&policy(ApprovalPolicy::auto_deny_all())),
            Transport::Control
        );
    }

    #[test]
    fn headless_args_put_the_prompt_last_after_a_separator() {
        let config = CodeBuddyConfig {
            effort: Some(super::super::config::Effort::Low),
            max_turns_per_run: Some(3),
            ..Default::default()
        };
        let p = policy(ApprovalPolicy::auto_approve());
        let inv = Invocation {
            resume: Some("sid"),
            prompt: Some("--not-a-flag"),
            model: Some("m1"),
            ..Default::default()
        };
        let a = build(&config, &p, Transport::Headless, &inv);
        assert_eq!(&a[..3], ["--print", "--output-format", "stream-json"]);
        assert_eq!(&a[a.len() - 2..], ["--", "--not-a-flag"]);
        let joined = a.join(" ");
        for want in [
            "--resume sid",
            "--permission-mode bypassPermissions",
            "--model m1",
            "--effort low",
            "--max-turns 3",
            "--include-partial-messages",
        ] {
            assert!(joined.contains(want), "{want} missing in {joined}");
        }
        assert!(!joined.contains("--fork-session"));
    }

    #[test]
    fn control_args_have_no_prompt_and_honour_the_configured_mode() {
        let config = CodeBuddyConfig {
            permission_mode: Some(PermissionMode::Plan),
            ..Default::default()
        };
        let allowed = ["mcp__a".to_owned(), "mcp__b".to_owned()];
        let inv = Invocation {
            prompt: Some("ignored"),
            resume: Some("s"),
            fork: true,
            instructions: Some("Be brief."),
            allowed_tools: &allowed,
            ..Default::default()
        };
        let a = build(&config, &Policy::default(), Transport::Control, &inv);
        assert_eq!(a[0], "--input-format=stream-json");
        assert!(!a.contains(&"ignored".to_string()));
        let joined = a.join(" ");
        assert!(joined.contains("--permission-mode plan"));
        assert!(joined.contains("--resume s --fork-session"));
        assert!(joined.contains("--append-system-prompt Be brief."));
        assert!(joined.contains("--allowedTools mcp__a,mcp__b"), "{joined}");
        let deny = policy(ApprovalPolicy {
            permission: ApprovalMode::AutoDeny,
            ..Default::default()
        });
        assert_eq!(
            permission_mode(&CodeBuddyConfig::default(), &deny),
            PermissionMode::Default
        );
    }

    #[test]
    fn owned_flags_are_refused_in_both_spellings() {
        assert!(check_extra_args(&["--add-dir".into(), "/x".into()]).is_ok());
        assert!(check_extra_args(&["--resume=abc".into()]).is_err());
        assert!(check_extra_args(&["-p".into()]).is_err());
    }
}
