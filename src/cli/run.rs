//! `agent-adaptor run`: stream one execution in the terminal, answer approvals interactively on
//! a TTY, and send supplemental messages typed while it runs.
//!
//! While a run is active, each line typed is a supplemental message (`Soon`); `/later <text>`
//! sends it after the turn, `/now <text>` interrupts, `/cancel` cancels. When an approval is
//! pending, the next line answers it (`y`/`n [reason]`, or a choice for questions).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use agent_adaptor::driver::{
    ApprovalMode, ApprovalPolicy, DecisionKind, Phase, Policy, QuestionMode, RunPolicyCaps, Timing,
};
use agent_adaptor::runtime::{Agent, ApprovalRequest, CallOptions, Event, MessageOptions, Payload, Stream};
use agent_adaptor::server::ServerConfig;
use clap::Args;
use futures::StreamExt;
use tokio::sync::mpsc;

use super::agents;

/// Arguments of `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The agent to run (see `agent-adaptor agents`); by default the configuration's default agent, the
    /// one `serve` treats as default: its first `[[agents]]` entry (`reference` without a `--config`).
    #[arg(long)]
    agent: Option<String>,
    /// The TOML configuration file `serve` reads: its agents can be run by name.
    #[arg(long, env = "AGENT_ADAPTOR_CONFIG")]
    config: Option<std::path::PathBuf>,
    /// Model override.
    #[arg(long)]
    model: Option<String>,
    /// Print every event as a JSON line instead of text.
    #[arg(long)]
    json: bool,
    /// Execution timeout in seconds.
    #[arg(long)]
    timeout: Option<u64>,
    /// Approve every permission and plan request without asking.
    #[arg(long, conflicts_with = "deny_all")]
    approve_all: bool,
    /// Deny every request without asking.
    #[arg(long)]
    deny_all: bool,
    /// Ask questions on the terminal (by default questions are auto-denied, as the policy says).
    #[arg(long)]
    ask_questions: bool,
    /// The prompt.
    prompt: String,
}

/// The run's approval policy. Without a flag a terminal is asked permission and plan requests and
/// questions are auto-denied (the library's portable default, not the service's question mode); without
/// a terminal every request is denied. A kind the driver never raises (`caps` lists no mode for it, as
/// Codex for plan reviews) is left unset: the driver would refuse a run that sets it.
fn policy(args: &RunArgs, interactive: bool, caps: &RunPolicyCaps) -> Policy {
    let mut approvals = if args.approve_all {
        ApprovalPolicy::auto_approve()
    } else if args.deny_all || !interactive {
        ApprovalPolicy::auto_deny_all()
    } else if args.ask_questions {
        ApprovalPolicy {
            question: QuestionMode::Ask,
            ..Default::default()
        }
    } else {
        ApprovalPolicy::default()
    };
    if caps.modes(DecisionKind::Permission).is_empty() {
        approvals.permission = ApprovalMode::Inherit;
    }
    if caps.modes(DecisionKind::PlanReview).is_empty() {
        approvals.plan_review = ApprovalMode::Inherit;
    }
    if caps.modes(DecisionKind::Question).is_empty() {
        approvals.question = QuestionMode::Inherit;
    }
    Policy {
        approvals,
        ..Default::default()
    }
}

fn spawn_stdin_reader() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut line = String::new();
        loop {
            line.clear();
            match stdin.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line.trim_end().to_owned()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

fn print_event(ev: &Event, out: &mut impl Write) {
    let _ = match &ev.payload {
        Payload::TextDelta(t) if t.phase == Phase::Content => write!(out, "{}", t.text),
        Payload::TextDelta(t) if t.phase == Phase::End => writeln!(out),
        Payload::Thinking(t) if t.phase == Phase::Content => writeln!(out, "\x1b[2m… {}\x1b[0m", t.text),
        Payload::ToolCall(t) if t.phase == Phase::Start => write!(out, "\x1b[36m→ {}\x1b[0m", t.name),
        Payload::ToolCall(t) if t.phase == Phase::End => {
            writeln!(
                out,
                "\x1b[36m({})\x1b[0m",
                t.args
                    .as_ref()
                    .map(|a| serde_json::to_string(a).unwrap_or_default())
                    .unwrap_or_default()
            )
        }
        Payload::ToolResult(r) => writeln!(
            out,
            "\x1b[36m← {}\x1b[0m",
            serde_json::to_string(&r.result).unwrap_or_default()
        ),
        Payload::MessageUpdate(u) => writeln!(out, "\x1b[33m[message {} {:?}]\x1b[0m", u.id, u.state),
        Payload::Dropped(d) => writeln!(out, "\x1b[31m[{} events dropped]\x1b[0m", d.count),
        Payload::Notice(n) if n.kind == "limit.approaching" => writeln!(out, "\x1b[33m[{}]\x1b[0m", n.text),
        _ => Ok(()),
    };
    let _ = out.flush();
}

async fn answer(req: &ApprovalRequest, line: &str) {
    let line = line.trim();
    let result = match req.kind {
        agent_adaptor::driver::DecisionKind::Question if !line.eq_ignore_ascii_case("n") => req.answer(line),
        _ if line.eq_ignore_ascii_case("y") || line.eq_ignore_ascii_case("yes") => req.approve(),
        _ => req.deny(line.strip_prefix('n').unwrap_or(line).trim()),
    };
    if let Err(e) = result {
        eprintln!("approval: {e}");
    }
}

async fn handle_line(stream: &Stream, line: String) {
    let (timing, text) = if let Some(t) = line.strip_prefix("/later ") {
        (Timing::AfterTurn, t.to_owned())
    } else if let Some(t) = line.strip_prefix("/now ") {
        (Timing::Interrupt, t.to_owned())
    } else if line.trim() == "/cancel" {
        stream.cancel();
        return;
    } else {
        (Timing::Soon, line)
    };
    if text.trim().is_empty() {
        return;
    }
    if let Err(e) = stream.send(text, MessageOptions::new().when(timing)).await {
        eprintln!("message not admitted: {e}");
    }
}

/// The agent to run: `--agent`, else the configuration's default agent as `serve` picks it (its first
/// `[[agents]]` entry, else the first agent discovery offers).
fn agent_name(args: &RunArgs, config: &ServerConfig) -> Result<String, String> {
    if let Some(name) = &args.agent {
        return Ok(name.clone());
    }
    if let Some(first) = config.agents.first() {
        return Ok(first.name.clone());
    }
    let offered = agents::offered(config)?;
    offered
        .default_agent()
        .map(|a| a.name.clone())
        .ok_or_else(|| "no agent is configured or found; see `agent-adaptor agents`".to_owned())
}

/// The agent `run` runs among those `serve` would offer with the same configuration.
fn build(args: &RunArgs) -> Result<Agent, String> {
    let mut config = agents::base_config(args.config.as_deref())?;
    let name = agent_name(args, &config)?;
    // Only the agent asked for is built: another agent's broken configuration is not this run's problem,
    // and discovery adds nothing when a configured agent already has the name.
    let configured = config.agents.iter().any(|s| s.name == name);
    config.agents.retain(|s| s.name == name);
    config.discover_clis = !configured;
    let offered = agents::offered(&config)?;
    match offered.get(&name) {
        Some(a) => Ok(a.agent.clone()),
        None => {
            let all = agents::base_config(args.config.as_deref()).and_then(|c| agents::offered(&c));
            let names: Vec<String> = all
                .map(|a| a.iter().map(|e| e.name.clone()).collect())
                .unwrap_or_default();
            Err(format!("unknown agent {name:?}; available: {}", names.join(", ")))
        }
    }
}

/// Runs `agent-adaptor run`.
pub async fn run(args: RunArgs) -> ExitCode {
    let interactive = std::io::stdin().is_terminal();
    let agent = match build(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("agent-adaptor: {e}");
            return ExitCode::from(2);
        }
    };
    let mut opts = CallOptions::new();
    if let Some(m) = &args.model {
        opts = opts.model(m);
    }
    opts = opts.policy(policy(&args, interactive, &agent.descriptor().run_policy));
    if let Some(t) = args.timeout {
        opts = opts.timeout(Duration::from_secs(t));
    }
    let stream = agent.send(&args.prompt, opts);
    let mut events = stream.events();
    let mut lines = if interactive {
        spawn_stdin_reader()
    } else {
        mpsc::unbounded_channel().1
    };
    let mut pending: Option<ApprovalRequest> = None;
    // Colours only on a terminal and never with `NO_COLOR` (anstream strips them otherwise).
    let mut stdout = anstream::stdout();
    loop {
        tokio::select! {
            ev = events.next() => {
                let Some(ev) = ev else { break };
                if args.json {
                    let _ = writeln!(stdout, "{}", serde_json::to_string(&ev).unwrap_or_default());
                } else {
                    print_event(&ev, &mut stdout);
                }
                if let Payload::ApprovalRequest(req) = &ev.payload {
                    anstream::eprint!("\n\x1b[35m? {} ({})", req.title, req.kind.as_str());
                    if !req.choices.is_empty() {
                        let keys: Vec<_> = req.choices.iter().map(|c| c.key.as_str()).collect();
                        anstream::eprint!(" choices: {}", keys.join("/"));
                    }
                    anstream::eprintln!(" [y/n reason]\x1b[0m");
                    pending = Some(req.clone());
                }
                if let Payload::Notice(n) = &ev.payload
                    && n.kind == "approval.resolved"
                    && pending.as_ref().is_some_and(|p| n.data.get("request_id").and_then(|v| v.as_str()) == Some(p.id.as_str()))
                {
                    pending = None;
                }
            }
            Some(line) = lines.recv() => {
                match pending.take() {
                    Some(req) => answer(&req, &line).await,
                    None => handle_line(&stream, line).await,
                }
            }
        }
    }
    match stream.result().await {
        Ok(r) => {
            if !args.json {
                anstream::eprintln!(
                    "\n\x1b[32m✓ done\x1b[0m ({} turn(s){})",
                    r.turns,
                    r.usage
                        .map(|u| format!(", {} in / {} out tokens", u.input_tokens, u.output_tokens))
                        .unwrap_or_default()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            anstream::eprintln!("\n\x1b[31m✗ {e}\x1b[0m");
            ExitCode::from(1)
        }
    }
}
