//! The cap on kept `claude` processes (`KeptLimit`), against the real CLI: more cold threads than the
//! cap leave at most the cap alive (counted as real children of this process, not only the registry),
//! the least recently used ones evicted, and an evicted thread's next run starts a fresh process that
//! resumes its session natively.
//!
//! With `AGENT_ADAPTOR_KEPT_THREADS` (default 4) threads and `AGENT_ADAPTOR_KEPT_CAP` (default 2;
//! `none` for no cap) it prints the children's total RSS, the figure in BENCHMARKS.md:
//! `AGENT_ADAPTOR_KEPT_THREADS=10 AGENT_ADAPTOR_KEPT_CAP=none cargo nextest run -E 'test(/kept_cap/)' --no-capture`.

use std::collections::HashMap;
use std::time::Duration;

use agent_adaptor::driver::process::KeptLimit;
use agent_adaptor::runtime::Agent;

use super::{Cl, drain};
use crate::driver_support::spawned;

/// `(pid, ppid, rss KiB)` of every process in `/proc`.
fn processes() -> Vec<(u32, u32, u64)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            continue;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        };
        if let Some(ppid) = field("PPid:") {
            out.push((pid, ppid as u32, field("VmRSS:").unwrap_or(0)));
        }
    }
    out
}

/// This process's direct children, and the total RSS (KiB) of all its descendants.
fn children_and_rss() -> (Vec<u32>, u64) {
    let all = processes();
    let me = std::process::id();
    let mut kids: HashMap<u32, Vec<u32>> = HashMap::new();
    let rss: HashMap<u32, u64> = all.iter().map(|(p, _, r)| (*p, *r)).collect();
    for (pid, ppid, _) in &all {
        kids.entry(*ppid).or_default().push(*pid);
    }
    let direct = kids.get(&me).cloned().unwrap_or_default();
    let (mut total, mut todo) = (0, direct.clone());
    while let Some(p) = todo.pop() {
        total += rss.get(&p).copied().unwrap_or(0);
        todo.extend(kids.get(&p).cloned().unwrap_or_default());
    }
    (direct, total)
}

fn setting(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

#[tokio::test]
async fn kept_cap_more_cold_threads_than_the_cap_leave_at_most_the_cap_and_evicted_threads_resume() {
    let Some(cl) = Cl::new().await else { return };
    let threads: usize = setting("AGENT_ADAPTOR_KEPT_THREADS", "4").parse().unwrap();
    let cap: Option<usize> = match setting("AGENT_ADAPTOR_KEPT_CAP", "2").as_str() {
        "none" => None,
        n => Some(n.parse().unwrap()),
    };
    KeptLimit::global().set_max(cap.unwrap_or(10_000));
    let agent = Agent::new(cl.driver.clone());
    let mut first_pid = 0;
    for i in 0..threads {
        let thread = agent.thread(&format!("cap-{i}"));
        let stream = thread.send(&format!("remember WORD{i}"), cl.opts());
        let events = drain(&stream).await;
        let r = stream.result().await.unwrap();
        assert_eq!(r.metadata["process_kept"], "true", "thread {i}");
        if i == 0 {
            first_pid = spawned(&events)[0];
        }
    }
    let (children, rss) = children_and_rss();
    let live = cl.driver.registry().live_count();
    println!(
        "kept_cap: {threads} cold threads, cap {}: {} live claude processes ({} registered), total RSS {rss} KiB",
        cap.map_or("none".to_owned(), |c| c.to_string()),
        children.len(),
        live,
    );
    let limit = KeptLimit::global();
    let Some(cap) = cap else {
        // Without a cap every thread keeps its process: the problem the cap solves.
        assert_eq!(children.len(), threads, "children {children:?}");
        agent.close(Duration::from_secs(10)).await.unwrap();
        return;
    };
    assert!(
        children.len() <= cap,
        "{} live claude processes (children {children:?}) for a cap of {cap}",
        children.len()
    );
    assert_eq!(live, cap.min(threads), "the registry agrees");
    assert_eq!(limit.kept(), cap.min(threads));
    assert_eq!(limit.evictions(), threads.saturating_sub(cap) as u64);
    assert!(
        !children.contains(&first_pid),
        "the least recently used thread's process was evicted"
    );

    // The evicted first thread goes on in a fresh process, resuming its session natively.
    let thread = agent.thread("cap-0");
    let stream = thread.send("what word?", cl.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(spawned(&events).len(), 1, "a fresh process");
    assert!(
        r.text.ends_with("what word?"),
        "the conversation continued: {}",
        r.text
    );
    let last = cl.requests().pop().expect("a model request");
    assert!(
        last.all_texts().iter().any(|t| t.contains("remember WORD0")),
        "resumed with the thread's history"
    );
    let (children, _) = children_and_rss();
    assert!(children.len() <= cap, "still within the cap: {children:?}");
    agent.close(Duration::from_secs(10)).await.unwrap();
    cl.assert_reaped();
    assert_eq!(limit.kept(), 0);
}
