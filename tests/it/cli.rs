//! The command line: `agent-adaptor run` streams a run with the built-in reference agent, prints
//! events as JSON lines with `--json`, and reports the outcome in its exit code; its colours appear only
//! where the terminal rules allow (never piped, never with `NO_COLOR`).

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
}

#[test]
fn run_json_prints_every_event_as_a_json_line() {
    let out = bin().args(["run", "--json", "hello cli"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.first().unwrap()["type"], "run_started");
    assert_eq!(lines.last().unwrap()["type"], "done");
    assert_eq!(
        lines.last().unwrap()["result"]["text"],
        "Reference reply: hello cli"
    );
    let seqs: Vec<u64> = lines
        .iter()
        .map(|l| l["meta"]["sequence"].as_u64().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn run_text_mode_streams_text_and_failures_exit_nonzero() {
    let out = bin().args(["run", "hi there"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Reference reply: hi there"));
    let failed = bin().args(["run", "please fail"]).output().unwrap();
    assert_eq!(failed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("agent_error"));
    let unknown = bin().args(["run", "--agent", "nope", "x"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}

/// `run` in text mode with `env` set (and the colour variables otherwise unset): stdout and stderr.
fn run_text(prompt: &str, env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = bin();
    cmd.args(["run", prompt]);
    for var in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE"] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn run_colours_only_where_allowed_never_piped_and_never_with_no_color() {
    for prompt in ["hi there", "please fail"] {
        // Piped (not a terminal): plain text, the same words.
        let (out, err) = run_text(prompt, &[]);
        assert!(
            out.contains("→ echo") && (err.contains("✓ done") || err.contains("✗ ")),
            "{out}{err}"
        );
        assert!(
            !out.contains('\x1b') && !err.contains('\x1b'),
            "no ANSI when piped: {out:?} {err:?}"
        );
        // Forced on (as on a terminal): coloured.
        let (out, err) = run_text(prompt, &[("CLICOLOR_FORCE", "1")]);
        assert!(
            out.contains("\x1b[36m→ echo") && err.contains("\x1b["),
            "{out:?} {err:?}"
        );
        // NO_COLOR beats everything.
        let (out, err) = run_text(prompt, &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
        assert!(
            !out.contains('\x1b') && !err.contains('\x1b'),
            "NO_COLOR: {out:?} {err:?}"
        );
    }
}

/// `run` without `--agent` runs the configuration's default agent (its first `[[agents]]` entry), the
/// one `serve` treats as default: a file whose agents replace the built-in `reference` is runnable
/// without naming one. Before, `run` asked for `reference` and failed: `unknown agent "reference";
/// available: echo`.
#[test]
fn run_without_an_agent_runs_the_configs_first_agent() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("serve.toml");
    std::fs::write(
        &file,
        "[[agents]]\nname = \"echo\"\nprovider = \"reference\"\n\n[[agents]]\nname = \"second\"\nprovider = \"reference\"\n",
    )
    .unwrap();
    let out = bin()
        .args(["run", "--config"])
        .arg(&file)
        .args(["--json", "hello default"])
        .env_remove("AGENT_ADAPTOR_CONFIG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let last: serde_json::Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .expect("the last line is JSON");
    assert_eq!(last["type"], "done");
    assert_eq!(last["result"]["text"], "Reference reply: hello default");
}

#[test]
fn without_a_terminal_approvals_follow_the_flags() {
    // Not a TTY: approvals are denied unless --approve-all.
    let denied = bin()
        .args(["run", "--json", "permission please"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&denied.stdout);
    assert!(text.contains("permission denied"), "{text}");
    let approved = bin()
        .args(["run", "--json", "--approve-all", "permission please"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&approved.stdout);
    assert!(
        text.contains("permission approved") && text.contains("write_file"),
        "{text}"
    );
}

#[test]
fn serve_refuses_a_zero_record_backlog_before_binding() {
    let out = bin()
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--store",
            "memory",
            "--record-backlog",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "clap refuses the value");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--record-backlog"), "{err}");
    assert!(out.stdout.is_empty(), "nothing was served");
}

/// The agents `serve` offers are the ones `run` and `agents` offer: the library's provider registry
/// finds the CLIs, and the `--config` file is the one `serve` reads.
mod registry {
    use std::path::Path;
    use std::process::Output;

    use agent_adaptor::testkit::claude_env::ClaudeEnv;
    use agent_adaptor::testkit::cli::{Cli, require};
    use agent_adaptor::testkit::mock::anthropic::{MockAnthropic, Reply, RequestLog, Script};
    use agent_adaptor::testkit::mock::responses::{self, MockResponses};
    use serde_json::Value;

    fn echo(req: &RequestLog) -> Reply {
        Reply::text(format!(
            "mock model heard: {}",
            req.last_user_texts().join(" ").trim()
        ))
    }

    async fn agent_adaptor(args: &[&str], env: &[(&str, &str)], cwd: &Path) -> Output {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-adaptor"));
        cmd.args(args).current_dir(cwd).env_remove("AGENT_ADAPTOR_CONFIG");
        for p in agent_adaptor::providers::registry::PROVIDERS {
            cmd.env_remove(p.env_var);
        }
        cmd.envs(env.iter().copied());
        tokio::time::timeout(std::time::Duration::from_secs(120), cmd.output())
            .await
            .expect("the CLI finished in time")
            .unwrap()
    }

    fn done(out: &Output) -> Value {
        assert!(
            out.status.success(),
            "rc {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        let last = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .map(str::to_owned)
            .unwrap_or_default();
        let last: Value = serde_json::from_str(&last).expect("the last line is the done event");
        assert_eq!(last["type"], "done", "{last}");
        last
    }

    /// `run --config FILE --agent claude` drives the real Claude CLI configured in the file, exactly as
    /// `serve --config FILE` would, against the loopback mock model.
    #[tokio::test]
    async fn run_drives_a_configured_real_cli_agent_from_the_serve_config_file() {
        let Some(bin) = require(Cli::Claude) else { return };
        let mock = MockAnthropic::start(Script::from_fn(echo)).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let env = ClaudeEnv::new(dir.path(), &mock.base_url()).unwrap();
        let config = serde_json::json!({
            "agents": [{
                "name": "mine",
                "provider": "claude",
                "config": {
                    "command": bin,
                    "directory": env.cwd,
                    "config_dir": env.config_dir,
                    "env": env.vars(),
                },
            }],
        });
        let file = dir.path().join("serve.toml");
        let text = toml::to_string(&toml::Value::try_from(&config).unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        let file = file.to_string_lossy().into_owned();

        let out = agent_adaptor(
            &[
                "run",
                "--config",
                &file,
                "--agent",
                "mine",
                "--json",
                "hello registry",
            ],
            &[],
            dir.path(),
        )
        .await;
        let last = done(&out);
        assert_eq!(last["result"]["text"], "mock model heard: hello registry");
        assert!(!mock.message_requests().is_empty(), "the real CLI asked the mock");

        let listed = agent_adaptor(&["agents", "--config", &file], &[], dir.path()).await;
        let listed = String::from_utf8_lossy(&listed.stdout);
        let line = listed
            .lines()
            .find(|l| l.starts_with("mine "))
            .unwrap_or_else(|| panic!("the configured agent is listed: {listed}"));
        assert!(
            line.contains("claude") && line.contains(&bin.display().to_string()),
            "{line}"
        );
    }

    /// With the Claude CLI found (here through `AGENT_ADAPTOR_CLAUDE_BIN`), `run --agent claude` drives it
    /// with no configuration at all, like the `claude` agent `serve` discovers.
    #[tokio::test]
    async fn run_drives_a_discovered_real_cli_without_a_config() {
        let Some(bin) = require(Cli::Claude) else { return };
        let mock = MockAnthropic::start(Script::from_fn(echo)).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let env = ClaudeEnv::new(dir.path(), &mock.base_url()).unwrap();
        let bin = bin.to_string_lossy().into_owned();
        let home = env.home.to_string_lossy().into_owned();
        let tmp = env.tmp.to_string_lossy().into_owned();
        let base = mock.base_url();
        let vars = [
            ("AGENT_ADAPTOR_CLAUDE_BIN", bin.as_str()),
            ("HOME", home.as_str()),
            ("TMPDIR", tmp.as_str()),
            ("ANTHROPIC_BASE_URL", base.as_str()),
            ("ANTHROPIC_API_KEY", "dummy-key"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
        ];
        let listed = agent_adaptor(&["agents"], &vars, &env.cwd).await;
        let listed = String::from_utf8_lossy(&listed.stdout);
        assert!(
            listed
                .lines()
                .any(|l| l.starts_with("claude ") && l.contains(&bin)),
            "discovered: {listed}"
        );
        let out = agent_adaptor(
            &["run", "--agent", "claude", "--json", "hi there"],
            &vars,
            &env.cwd,
        )
        .await;
        let last = done(&out);
        assert_eq!(last["result"]["text"], "mock model heard: hi there");
    }

    /// The Claude and Codex CLIs found on `PATH` (no configuration, no `AGENT_ADAPTOR_*_BIN`) are driven
    /// by `run --agent claude` and `run --agent codex` without a terminal, each against its loopback mock
    /// model. Without a terminal `run` auto-denies approvals, and only for the kinds the driver raises:
    /// before, it set all three and Codex (which never raises a plan review) refused the run with "the
    /// codex driver does not support AutoDeny for PlanReview requests".
    #[tokio::test]
    async fn run_drives_the_real_clis_found_on_path() {
        let Some(claude) = require(Cli::Claude) else {
            return;
        };
        let Some(codex) = require(Cli::Codex) else { return };
        let dir = tempfile::tempdir().unwrap();
        let on_path = dir.path().join("bin");
        std::fs::create_dir_all(&on_path).unwrap();
        std::os::unix::fs::symlink(&claude, on_path.join("claude")).unwrap();
        std::os::unix::fs::symlink(&codex, on_path.join("codex")).unwrap();
        let path = format!(
            "{}:{}",
            on_path.display(),
            std::env::var("PATH").unwrap_or_default()
        );

        let anthropic = MockAnthropic::start(Script::from_fn(echo)).await.unwrap();
        let env = ClaudeEnv::new(dir.path(), &anthropic.base_url()).unwrap();
        let responses = MockResponses::start(responses::Script::new().otherwise(|log| {
            let heard = log.last().and_then(|r| r.last_user_text()).unwrap_or_default();
            responses::Reply::new().text(format!("mock responses heard: {}", heard.trim()))
        }))
        .await
        .unwrap();
        let home = env.home.to_string_lossy().into_owned();
        let tmp = env.tmp.to_string_lossy().into_owned();
        let anthropic_url = anthropic.base_url();
        let responses_url = responses.base_url();
        let vars = [
            ("PATH", path.as_str()),
            ("HOME", home.as_str()),
            ("TMPDIR", tmp.as_str()),
            ("ANTHROPIC_BASE_URL", anthropic_url.as_str()),
            ("ANTHROPIC_API_KEY", "dummy-key"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
            ("AGENT_ADAPTOR_CODEX_BASE_URL", responses_url.as_str()),
            ("AGENT_ADAPTOR_CODEX_API_KEY", "dummy-key"),
        ];

        let listed = agent_adaptor(&["agents"], &vars, &env.cwd).await;
        let listed = String::from_utf8_lossy(&listed.stdout);
        for name in ["claude", "codex"] {
            assert!(
                listed.lines().any(|l| l.starts_with(&format!("{name} "))
                    && l.contains(&on_path.join(name).display().to_string())),
                "{name} is found on PATH: {listed}"
            );
        }
        let out = agent_adaptor(
            &["run", "--agent", "claude", "--json", "hello claude"],
            &vars,
            &env.cwd,
        )
        .await;
        assert_eq!(done(&out)["result"]["text"], "mock model heard: hello claude");
        let out = agent_adaptor(
            &[
                "run",
                "--agent",
                "codex",
                "--model",
                "gpt-5.5",
                "--json",
                "hello codex",
            ],
            &vars,
            &env.cwd,
        )
        .await;
        assert_eq!(done(&out)["result"]["text"], "mock responses heard: hello codex");
        assert!(
            !responses.responses_requests().is_empty(),
            "the real Codex CLI asked the mock"
        );
    }

    /// Without the CLI, `agents` says how to point at one and `run --agent claude` fails with a usage
    /// error that lists what is available.
    #[tokio::test]
    async fn a_missing_cli_is_named_with_the_way_to_provide_it() {
        let dir = tempfile::tempdir().unwrap();
        let vars = [("PATH", "/nonexistent")];
        let listed = agent_adaptor(&["agents"], &vars, dir.path()).await;
        let listed = String::from_utf8_lossy(&listed.stdout);
        assert!(listed.lines().any(|l| l.starts_with("reference ")), "{listed}");
        let claude = listed
            .lines()
            .find(|l| l.contains(" claude ") && l.contains("not found"))
            .unwrap_or_else(|| panic!("claude is reported missing: {listed}"));
        assert!(claude.contains("AGENT_ADAPTOR_CLAUDE_BIN"), "{claude}");
        let out = agent_adaptor(&["run", "--agent", "claude", "x"], &vars, dir.path()).await;
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("unknown agent \"claude\"") && err.contains("reference"),
            "{err}"
        );
    }
}
