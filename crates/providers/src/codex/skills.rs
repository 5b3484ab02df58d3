//! A run's skills on Codex: the app-server's `skills/extraRoots/set` names extra directories whose
//! `<name>/SKILL.md` children join the skills Codex lists to the model (its developer "skills" message),
//! next to `$CODEX_HOME/skills`. The setting belongs to the process, not to a thread, and applies from
//! the next turn on (verified against codex-cli 0.171.0, also after `thread/start`), so each run sets
//! its own overlay (`skills::overlay`) before its turns, and a reused process that runs without skills
//! is cleared first: the previous run's overlay is gone and its skills are not this run's.

use std::path::Path;

use serde_json::json;

use super::wire::client::ClientRequest;

/// The method.
pub const METHOD: &str = "skills/extraRoots/set";

/// The request this run needs: its overlay, or an empty list on a `reused` process; `None` for a new
/// process of a run without skills (nothing to set, nothing to clear).
pub fn extra_roots(root: Option<&Path>, reused: bool) -> Option<ClientRequest> {
    let roots: Vec<String> = root
        .map(|r| r.to_string_lossy().into_owned())
        .into_iter()
        .collect();
    if roots.is_empty() && !reused {
        return None;
    }
    Some(ClientRequest::Other {
        method: METHOD.into(),
        params: json!({ "extraRoots": roots }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(r: Option<ClientRequest>) -> Option<serde_json::Value> {
        match r {
            Some(ClientRequest::Other { method, params }) => {
                assert_eq!(method, METHOD);
                Some(params)
            }
            Some(other) => panic!("unexpected request {}", other.method()),
            None => None,
        }
    }

    #[test]
    fn a_run_sets_its_overlay_and_a_reused_process_is_cleared() {
        let set = params(extra_roots(Some(Path::new("/o/skills")), false)).unwrap();
        assert_eq!(set, json!({ "extraRoots": ["/o/skills"] }));
        let clear = params(extra_roots(None, true)).unwrap();
        assert_eq!(clear, json!({ "extraRoots": [] }));
        assert!(params(extra_roots(None, false)).is_none());
    }
}
