//! The service under test: the real `agent-adaptor serve` binary as a child process (through
//! `driver::process`), on 127.0.0.1:0, with its default SQLite store in a scratch directory and one agent,
//! `fake`, backed by the `fake-cursor-agent` binary through the real Cursor driver. Running the service in
//! its own process is what lets the memory scenarios read the server's RSS alone, without the load
//! generator's clients or the fake CLI children.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_adaptor::driver::process::{Child, Line, ProcessRegistry, ProcessSpec, StopPlan, spawn};
use futures::StreamExt;

use crate::error::LoadError;

/// The agent name the scenarios start runs on.
pub const AGENT: &str = "fake";

/// Where the two binaries are, and the store the service uses.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// `agent-adaptor`.
    pub server: PathBuf,
    /// `fake-cursor-agent`.
    pub fake_cli: PathBuf,
    /// `serve --store` (`None`: the default SQLite file under the scratch data directory).
    pub store: Option<String>,
}

impl Binaries {
    /// The given paths, else the siblings of this executable (`cargo build --release --bins` puts all
    /// three in `target/release`).
    pub fn resolve(server: Option<PathBuf>, fake_cli: Option<PathBuf>) -> Result<Binaries, LoadError> {
        let dir = std::env::current_exe()?
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let pick = |given: Option<PathBuf>, name: &str| {
            let p = given.unwrap_or_else(|| dir.join(name));
            if p.is_file() {
                Ok(p)
            } else {
                Err(LoadError::Server(format!(
                    "{} not found (build it: cargo build --release --bins, or pass its path)",
                    p.display()
                )))
            }
        };
        Ok(Binaries {
            server: pick(server, "agent-adaptor")?,
            fake_cli: pick(fake_cli, "fake-cursor-agent")?,
            store: None,
        })
    }
}

/// A running service.
pub struct Service {
    child: Child,
    _registry: ProcessRegistry,
    /// Its address.
    pub addr: SocketAddr,
    dir: PathBuf,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

fn config(bins: &Binaries, dir: &Path) -> String {
    let path = |p: &Path| toml::Value::String(p.to_string_lossy().into_owned());
    let mut agent_config = toml::Table::new();
    agent_config.insert("command".into(), path(&bins.fake_cli));
    agent_config.insert("directory".into(), path(&dir.join("workspace")));
    agent_config.insert("profile_dir".into(), path(&dir.join("cursor")));
    let mut agent = toml::Table::new();
    agent.insert("name".into(), AGENT.into());
    agent.insert("provider".into(), "cursor".into());
    agent.insert("config".into(), toml::Value::Table(agent_config));
    let mut root = toml::Table::new();
    root.insert("discover_clis".into(), false.into());
    root.insert("shutdown_grace".into(), "3s".into());
    root.insert(
        "agents".into(),
        toml::Value::Array(vec![toml::Value::Table(agent)]),
    );
    root.to_string()
}

impl Service {
    /// Starts `agent-adaptor serve` and waits for its listening line.
    pub async fn start(bins: &Binaries) -> Result<Service, LoadError> {
        let dir = std::env::temp_dir().join(format!(
            "agent-adaptor-loadgen-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(dir.join("workspace"))?;
        std::fs::create_dir_all(dir.join("cursor"))?;
        let config_path = dir.join("serve.toml");
        std::fs::write(&config_path, config(bins, &dir))?;
        let registry = ProcessRegistry::new();
        let mut spec = ProcessSpec::new(&bins.server)
            .arg("serve")
            .arg("--config")
            .arg(&config_path)
            // Every load connection comes from 127.0.0.1: lift the per-IP and global connection bounds
            // (defaults 256 and 4,096) above what the largest scenario opens (10,000 subscribers).
            .args(["--max-connections", "20000", "--max-connections-per-ip", "20000"])
            .args(["--bind", "127.0.0.1:0", "--data-dir"])
            .arg(dir.join("data"));
        if let Some(store) = &bins.store {
            spec = spec.arg("--store").arg(store);
        }
        let spec = spec
            .inherit_base_env()
            .env("RUST_LOG", "warn")
            .label("agent-adaptor serve (loadgen)");
        let mut child = spawn(&registry, spec)
            .await
            .map_err(|e| LoadError::Server(format!("spawn {}: {e}", bins.server.display())))?;
        let mut stdout = child
            .take_stdout()
            .ok_or_else(|| LoadError::Server("no stdout".into()))?;
        // The listening line is the first the service prints; a wrapper (a profiler) may print before it.
        let mut seen = Vec::new();
        let addr = loop {
            let next = tokio::time::timeout(Duration::from_secs(60), stdout.next()).await;
            let raw = match next {
                Ok(Some(Ok(Line::Json { raw, .. } | Line::Invalid { raw, .. }))) => {
                    String::from_utf8_lossy(&raw).into_owned()
                }
                Ok(Some(Ok(Line::TooLong { .. }))) => String::new(),
                _ => {
                    let tail = child.stderr().tail_lossy();
                    return Err(LoadError::Server(format!(
                        "no listening line within 60 s (stdout {seen:?}); stderr: {tail}"
                    )));
                }
            };
            if let Some(addr) = raw
                .trim()
                .strip_prefix("agent-adaptor listening on http://")
                .and_then(|a| a.parse::<SocketAddr>().ok())
            {
                break addr;
            }
            seen.push(raw);
        };
        // Keep draining stdout so the service never blocks on a full pipe.
        tokio::spawn(async move { while stdout.next().await.is_some() {} });
        Ok(Service {
            child,
            _registry: registry,
            addr,
            dir,
        })
    }

    /// The service's process id.
    pub fn pid(&self) -> u32 {
        self.child.pid()
    }

    /// The service's resident set size, KiB (`VmRSS` of `/proc/<pid>/status`).
    pub fn rss_kib(&self) -> Result<u64, LoadError> {
        status_field(self.pid(), "VmRSS")
    }

    /// CPU time the service has used so far (user + system), seconds.
    pub fn cpu_s(&self) -> Result<f64, LoadError> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))?;
        // Fields after the `(comm)`: state is field 3; utime and stime are fields 14 and 15.
        let rest = stat
            .rsplit_once(')')
            .map(|(_, r)| r)
            .ok_or_else(|| LoadError::Server("unreadable /proc/<pid>/stat".into()))?;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        // USER_HZ is 100 on Linux.
        Ok((ticks(11) + ticks(12)) as f64 / 100.0)
    }

    /// SIGTERM (graceful shutdown), SIGKILL after 10 s; reaped; the scratch directory removed.
    pub async fn stop(self) -> Result<(), LoadError> {
        let exit = self
            .child
            .stop(StopPlan::new().term_grace(Duration::from_secs(10)))
            .await;
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            eprintln!("loadgen: could not remove {}: {e}", self.dir.display());
        }
        if exit.success() {
            Ok(())
        } else {
            Err(LoadError::Server(format!(
                "the service did not stop cleanly: {exit:?}; stderr: {}",
                self.child.stderr().tail_lossy()
            )))
        }
    }
}

/// A `kB` field of `/proc/<pid>/status`, in KiB.
pub fn status_field(pid: u32, field: &str) -> Result<u64, LoadError> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .strip_prefix(':')?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .ok_or_else(|| LoadError::Server(format!("no {field} in /proc/{pid}/status")))
}
