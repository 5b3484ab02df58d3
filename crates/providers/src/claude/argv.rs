//! The Claude Code command line: which transport a request needs ([`select_transport`]), the flags for it
//! ([`build`]), and the extra arguments a host may not pass because the driver owns them
//! ([`check_extra_args`]).
//!
//! Transport rule: **one-shot** (`-p --output-format stream-json`, the prompt as the last argument after
//! `--`, one process per provider turn) when no decision can reach the host — permission and plan review
//! are both auto-approved and questions are not asked; **bidirectional** (`--input-format stream-json
//! --permission-prompt-tool stdio`, the `initialize` handshake, `can_use_tool` answered by the driver,
//! native mid-run messages and `interrupt`) otherwise, which includes the default policy (permission and
//! plan review Ask).

use std::path::Path;

use crate::driver::Policy;
use crate::stream_json::argv as shared;

use super::config::{Config, PermissionMode};

/// How the driver talks to the CLI for one invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `-p --output-format stream-json`: one process per provider turn; no decisions reach the host.
    OneShot,
    /// `--input-format stream-json --permission-prompt-tool stdio`: one process for the invocation;
    /// decisions arrive as `can_use_tool` control requests.
    Bidi,
}

impl Transport {
    /// A short name (`one_shot`, `bidi`).
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::OneShot => "one_shot",
            Transport::Bidi => "bidi",
        }
    }
}

/// The transport `policy` needs (see the module docs).
pub fn select_transport(policy: &Policy) -> Transport {
    if shared::nothing_can_ask(policy) {
        Transport::OneShot
    } else {
        Transport::Bidi
    }
}

/// The `--permission-mode` value (see [`shared::permission_mode`]).
pub fn permission_mode(config: &Config, policy: &Policy) -> PermissionMode {
    shared::permission_mode(config.permission_mode, policy)
}

/// Flags the driver sets itself; a host passing one in `extra_args` is a configuration error.
pub const OWNED_FLAGS: &[&str] = &[
    "-p",
    "--print",
    "--output-format",
    "--input-format",
    "--verbose",
    "--include-partial-messages",
    "--replay-user-messages",
    "--permission-prompt-tool",
    "--permission-prompts",
    "--permission-mode",
    "--dangerously-skip-permissions",
    "--allow-dangerously-skip-permissions",
    "-r",
    "--resume",
    "-c",
    "--continue",
    "--fork-session",
    "--session-id",
    "--no-session-persistence",
    "--model",
    "--effort",
    "--max-turns",
    "--json-schema",
    "--append-system-prompt",
    "--append-system-prompt-file",
    "--system-prompt",
    "--system-prompt-file",
    "--mcp-config",
    "--strict-mcp-config",
    "--settings",
    "--setting-sources",
];

/// Refuses extra arguments that would override a driver-owned flag (also in `--flag=value` form).
pub fn check_extra_args(extra: &[String]) -> Result<(), String> {
    shared::check_extra_args(extra, OWNED_FLAGS, "claude")
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
    /// `--add-dir <dir>`: the run's skill overlay (the CLI loads `<dir>/.claude/skills/<name>/SKILL.md`
    /// as if they were its own; see `skills::overlay`).
    pub skills: Option<&'a Path>,
    /// One-shot only: the prompt, passed after `--`.
    pub prompt: Option<&'a str>,
}

/// The arguments after the program for `transport`.
pub fn build(config: &Config, policy: &Policy, transport: Transport, inv: &Invocation<'_>) -> Vec<String> {
    let mut a: Vec<String> = vec!["-p".into(), "--output-format".into(), "stream-json".into()];
    if transport == Transport::Bidi {
        a.extend([
            "--input-format".into(),
            "stream-json".into(),
            "--permission-prompt-tool".into(),
            "stdio".into(),
        ]);
    }
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
    if let Some(dir) = inv.skills {
        a.extend(["--add-dir".into(), dir.to_string_lossy().into_owned()]);
    }
    if !inv.allowed_tools.is_empty() {
        // One comma-separated value: the flag is variadic, so separate values could swallow what follows.
        a.extend(["--allowedTools".into(), inv.allowed_tools.join(",")]);
    }
    a.extend(config.common.extra_args.iter().cloned());
    if let (Transport::OneShot, Some(p)) = (transport, inv.prompt) {
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
        let config = Config {
            model: Some("cfg-model".into()),
            ..Default::default()
        };
        let p = policy(ApprovalPolicy::auto_approve());
        let models = |inv: &Invocation| {
            let a = build(&config, &p, Transport::OneShot, inv);
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
        let none = build(&Config::default(), &p, Transport::OneShot, &default);
        assert!(!none.contains(&"--model".to_string()), "no model, no flag");
    }

    fn policy(approvals: ApprovalPolicy) -> Policy {
        Policy {
            approvals,
            ..Default::default()
        }
    }

    #[test]
    fn transport_is_one_shot_only_when_nothing_can_ask() {
        assert_eq!(select_transport(&Policy::default()), Transport::Bidi);
        assert_eq!(
            select_transport(&policy(ApprovalPolicy::auto_approve())),
            Transport::OneShot
        );
        let ask_questions = ApprovalPolicy {
            question: QuestionMode::Ask,
            ..ApprovalPolicy::auto_approve()
        };
        assert_eq!(select_transport(&policy(ask_questions)), Transport::Bidi);
        assert_eq!(
            select_transport(&policy(ApprovalPolicy::auto_deny_all())),
            Transport::Bidi
        );
    }

    #[test]
    fn one_shot_args_put_the_prompt_last_after_a_separator() {
        let config = Config {
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
        let a = build(&config, &p, Transport::OneShot, &inv);
        assert_eq!(&a[..3], ["-p", "--output-format", "stream-json"]);
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
        assert!(!joined.contains("--fork-session") && !joined.contains("--input-format"));
        assert!(!joined.contains("--add-dir"), "no skills, no overlay");
    }

    #[test]
    fn bidi_args_have_no_prompt_ask_over_stdio_and_honour_the_configured_mode() {
        let config = Config {
            permission_mode: Some(PermissionMode::Plan),
            ..Default::default()
        };
        let inv = Invocation {
            prompt: Some("ignored"),
            resume: Some("s"),
            fork: true,
            instructions: Some("Be brief."),
            mcp_config: Some(Path::new("/m.json")),
            allowed_tools: &["mcp__a".into(), "mcp__b".into()],
            skills: Some(Path::new("/overlay")),
            ..Default::default()
        };
        let a = build(&config, &Policy::default(), Transport::Bidi, &inv);
        assert!(!a.contains(&"ignored".to_string()));
        let joined = a.join(" ");
        assert!(joined.contains("--input-format stream-json --permission-prompt-tool stdio"));
        assert!(joined.contains("--permission-mode plan"));
        assert!(joined.contains("--resume s --fork-session"));
        assert!(joined.contains("--append-system-prompt Be brief."));
        assert!(joined.contains("--mcp-config /m.json --strict-mcp-config"));
        assert!(joined.contains("--allowedTools mcp__a,mcp__b"));
        assert!(joined.contains("--add-dir /overlay --allowedTools"));
        let deny = policy(ApprovalPolicy {
            permission: ApprovalMode::AutoDeny,
            ..Default::default()
        });
        assert_eq!(
            permission_mode(&Config::default(), &deny),
            PermissionMode::Default
        );
    }

    #[test]
    fn owned_flags_are_refused_in_both_spellings() {
        assert!(check_extra_args(&["--add-dir".into(), "/x".into()]).is_ok());
        assert!(check_extra_args(&["--resume=abc".into()]).is_err());
        assert!(check_extra_args(&["-p".into()]).is_err());
        assert!(check_extra_args(&["--permission-prompt-tool".into(), "x".into()]).is_err());
    }
}
