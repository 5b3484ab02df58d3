//! The Docker files cannot silently rot: every `AGENT_ADAPTOR_*` variable and every `serve` flag that
//! `docker-compose.yml` and the `Dockerfile` name exists in `agent-adaptor serve --help` (or is the key
//! variable `docker/serve.toml` reads through `keys_env`), the baked-in configuration parses, turns
//! authentication on (so the 0.0.0.0 bind is allowed) and refuses to start without the key. No Docker
//! daemon or image is needed: the files are checked as text.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use agent_adaptor::server::{ConfigError, FileConfig, ServerConfig};

fn repo(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(file)
}

fn read(file: &str) -> String {
    std::fs::read_to_string(repo(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// `AGENT_ADAPTOR_*` names in `text` (comments included: they document variables too).
fn variables(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("AGENT_ADAPTOR_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        if end > "AGENT_ADAPTOR_".len() {
            out.insert(tail[..end].to_owned());
        }
        rest = &tail[end..];
    }
    out
}

/// `--flags` in `text`.
fn flags(text: &str) -> BTreeSet<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '[' | ']' | ','))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| w.split('=').next().unwrap_or(w).to_owned())
        .collect()
}

/// The `command:` line of the compose service and the `CMD` of the Dockerfile.
fn command_lines(compose: &str, dockerfile: &str) -> String {
    compose
        .lines()
        .chain(dockerfile.lines())
        .filter(|l| l.trim_start().starts_with("command:") || l.trim_start().starts_with("CMD"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn docker_files_name_only_settings_the_cli_has() {
    let help = Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
        .args(["serve", "--help"])
        .env_clear()
        .output()
        .unwrap();
    assert!(help.status.success());
    // clap wraps long lines: compare with whitespace collapsed.
    let help = String::from_utf8(help.stdout)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        + " ";
    let compose = read("docker-compose.yml");
    let dockerfile = read("Dockerfile");
    let baked = FileConfig::load(&repo("docker/serve.toml")).expect("docker/serve.toml parses");
    let key_vars: BTreeSet<String> = baked
        .tenants
        .iter()
        .flat_map(|t| t.keys_env.iter().cloned())
        .collect();

    let named: BTreeSet<String> = variables(&compose)
        .union(&variables(&dockerfile))
        .cloned()
        .collect();
    assert!(
        named.contains("AGENT_ADAPTOR_STORE"),
        "compose configures the store: {named:?}"
    );
    for var in &named {
        assert!(
            help.contains(&format!("[env: {var}=")) || key_vars.contains(var),
            "{var} is named in the Docker files but `serve --help` has no such variable"
        );
    }
    let commands = command_lines(&compose, &dockerfile);
    let used = flags(&commands);
    assert!(used.contains("--no-discover"), "{commands}");
    for flag in &used {
        assert!(
            help.contains(&format!("{flag} ")),
            "{flag} is used in the Docker files but `serve --help` has no such flag"
        );
    }
    // The config file the image points AGENT_ADAPTOR_CONFIG at is the one it copies.
    assert!(dockerfile.contains("COPY docker/serve.toml /etc/agent-adaptor/serve.toml"));
    assert!(dockerfile.contains("AGENT_ADAPTOR_CONFIG=/etc/agent-adaptor/serve.toml"));
    assert!(
        dockerfile.contains("USER agent"),
        "the runtime stage runs as a non-root user"
    );
    // The key variable the config reads is the one compose passes in.
    for var in &key_vars {
        assert!(compose.contains(&format!("{var}:")), "compose does not set {var}");
    }
}

#[test]
fn docker_the_baked_config_needs_its_key_and_turns_authentication_on() {
    let baked = FileConfig::load(&repo("docker/serve.toml")).unwrap();
    let err = baked
        .clone()
        .apply(ServerConfig::default(), |_| None)
        .unwrap_err();
    assert!(
        matches!(&err, ConfigError::MissingKeyEnv { var, .. } if var == "AGENT_ADAPTOR_API_KEY"),
        "{err}"
    );
    let config = baked
        .apply(ServerConfig::default(), |v| {
            (v == "AGENT_ADAPTOR_API_KEY").then(|| "a-key-long-enough-for-the-test".to_owned())
        })
        .unwrap();
    assert_eq!(config.tenants.len(), 1);
    assert_eq!(config.tenants[0].keys.len(), 1, "a non-loopback bind needs a key");
    assert!(config.ip_limits.requests_per_second.is_some());
}

#[test]
fn docker_the_textual_helpers_find_what_they_look_for() {
    let v = variables(
        "A: ${AGENT_ADAPTOR_API_KEY:?x}\nAGENT_ADAPTOR_BIND=0.0.0.0 AGENT_ADAPTOR_X1 AGENT_ADAPTOR_*",
    );
    assert_eq!(
        v.into_iter().collect::<Vec<_>>(),
        ["AGENT_ADAPTOR_API_KEY", "AGENT_ADAPTOR_BIND", "AGENT_ADAPTOR_X1"]
    );
    let f = flags(r#"command: ["serve", "--no-discover", "--shutdown-grace-secs", "20"]"#);
    assert_eq!(
        f.into_iter().collect::<Vec<_>>(),
        ["--no-discover", "--shutdown-grace-secs"]
    );
}

/// The image has a `HEALTHCHECK`, and the command it runs works with no HTTP client in the image:
/// `agent-adaptor health` exits 0 against a serving process (on the bind address `AGENT_ADAPTOR_BIND`
/// names, a wildcard asked on loopback), 1 when nothing answers.
#[test]
fn docker_the_healthcheck_command_exists_and_tells_up_from_down() {
    let dockerfile = read("Dockerfile");
    let check = dockerfile
        .lines()
        .skip_while(|l| !l.starts_with("HEALTHCHECK"))
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        check.contains(r#"CMD ["agent-adaptor", "health"]"#),
        "the Dockerfile has no HEALTHCHECK running `agent-adaptor health`: {check:?}"
    );
    let mut serve = super::serve_command().spawn().unwrap();
    let url = super::listening_url(&mut std::io::BufReader::new(serve.stdout.take().unwrap()));
    let port = url.rsplit(':').next().unwrap().to_owned();
    let health = |bind: &str, extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
            .arg("health")
            .args(extra)
            .env_clear()
            .env("AGENT_ADAPTOR_BIND", bind)
            .output()
            .unwrap()
    };
    let up = health(&format!("0.0.0.0:{port}"), &[]);
    assert_eq!(
        up.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let ready = health("0.0.0.0:1", &["--ready", "--url", &url]);
    assert_eq!(
        ready.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ready.stderr)
    );
    super::sigterm(&serve);
    assert_eq!(serve.wait().unwrap().code(), Some(0));
    let down = health(&format!("127.0.0.1:{port}"), &["--timeout-secs", "2"]);
    assert_eq!(down.status.code(), Some(1), "nothing listens any more");
    assert!(String::from_utf8_lossy(&down.stderr).contains("/healthz"));
    let bad = health("x", &["--url", "https://example.invalid"]);
    assert_eq!(bad.status.code(), Some(2));
}
