//! Hooks in Claude Code's native shape: the `hooks` object of `settings.json`,
//! `{"<Event>": [{"matcher": "<tools>", "hooks": [{"type": "command", "command": "…", "timeout": N}]}]}`.
//!
//! Each [`HookSpec`] becomes one matcher group appended to its event's list. The manifest records
//! every group the SDK added ([`ManagedHook`]); the next sync removes exactly those (the first equal
//! group of the same event) before adding the new set, so hooks the user or a clone source put there
//! are kept, and a group someone edited since is no longer the SDK's and is left alone. An event list
//! left empty, and a `hooks` object left empty, are removed.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{HookSpec, ProfileError, ProfileResourceKind};

/// One matcher group the SDK added to `settings.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagedHook {
    /// The event key.
    pub event: String,
    /// The group exactly as written.
    pub group: Value,
}

/// The Claude Code matcher group of `h`.
pub fn claude_group(h: &HookSpec) -> Value {
    let mut command = json!({"type": "command", "command": h.command});
    if let Some(t) = h.timeout_secs {
        command["timeout"] = json!(t);
    }
    let mut group = json!({"hooks": [command]});
    if let Some(m) = &h.matcher {
        group["matcher"] = json!(m);
    }
    group
}

/// Replaces the groups the SDK wrote earlier (`old`) in the settings document `doc` by the groups of
/// `hooks`; returns what is now the SDK's. Invalid hooks are refused before anything changes.
pub fn apply(
    doc: &mut Value,
    old: &[ManagedHook],
    hooks: &[HookSpec],
) -> Result<Vec<ManagedHook>, ProfileError> {
    for h in hooks {
        h.validate().map_err(|reason| ProfileError::Invalid {
            kind: ProfileResourceKind::Hooks,
            reason,
        })?;
    }
    let Some(settings) = doc.as_object_mut() else {
        return Err(invalid("settings.json is not a JSON object".into()));
    };
    let mut table = match settings.remove("hooks") {
        None => Map::new(),
        Some(Value::Object(t)) => t,
        Some(other) => {
            settings.insert("hooks".into(), other);
            return Err(invalid("settings.json `hooks` is not an object".into()));
        }
    };
    for m in old {
        if let Some(Value::Array(groups)) = table.get_mut(&m.event)
            && let Some(i) = groups.iter().position(|g| g == &m.group)
        {
            groups.remove(i);
        }
    }
    let mut written = Vec::with_capacity(hooks.len());
    for h in hooks {
        let group = claude_group(h);
        let list = table.entry(h.event.clone()).or_insert_with(|| json!([]));
        let Value::Array(groups) = list else {
            return Err(invalid(format!(
                "settings.json `hooks.{}` is not a list",
                h.event
            )));
        };
        groups.push(group.clone());
        written.push(ManagedHook {
            event: h.event.clone(),
            group,
        });
    }
    table.retain(|_, v| !matches!(v, Value::Array(a) if a.is_empty()));
    if !table.is_empty() {
        settings.insert("hooks".into(), Value::Object(table));
    }
    Ok(written)
}

fn invalid(reason: String) -> ProfileError {
    ProfileError::Invalid {
        kind: ProfileResourceKind::Hooks,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_claude_shaped_and_only_the_sdk_ones_are_replaced() {
        let mine = json!({"matcher": "Write", "hooks": [{"type": "command", "command": "user-lint"}]});
        let mut doc = json!({"model": "opus", "hooks": {"PreToolUse": [mine.clone()]}});
        let first = apply(
            &mut doc,
            &[],
            &[
                HookSpec::new("PreToolUse", "log-tool")
                    .matcher("Bash")
                    .timeout_secs(5),
                HookSpec::new("Stop", "say-bye"),
            ],
        )
        .unwrap();
        assert_eq!(
            doc["hooks"]["PreToolUse"],
            json!([mine, {"matcher": "Bash", "hooks": [{"type": "command", "command": "log-tool", "timeout": 5}]}])
        );
        assert_eq!(
            doc["hooks"]["Stop"],
            json!([{"hooks": [{"type": "command", "command": "say-bye"}]}])
        );
        let second = apply(&mut doc, &first, &[HookSpec::new("PreToolUse", "other")]).unwrap();
        assert_eq!(second.len(), 1);
        assert_eq!(doc["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert!(doc["hooks"].get("Stop").is_none(), "an emptied event is removed");
        apply(&mut doc, &second, &[]).unwrap();
        assert_eq!(
            doc,
            json!({"model": "opus", "hooks": {"PreToolUse": [mine]}}),
            "the user's hook survives"
        );
    }

    #[test]
    fn bad_hooks_and_bad_settings_are_typed_errors_that_change_nothing() {
        let mut doc = json!({"hooks": {}});
        for bad in [
            HookSpec::new("Pre Tool", "x"),
            HookSpec::new("", "x"),
            HookSpec::new("Stop", "  "),
            HookSpec::new("Stop", "x").timeout_secs(0),
        ] {
            let e = apply(&mut doc, &[], &[bad]).unwrap_err();
            assert!(
                matches!(
                    e,
                    ProfileError::Invalid {
                        kind: ProfileResourceKind::Hooks,
                        ..
                    }
                ),
                "{e}"
            );
        }
        assert_eq!(doc, json!({"hooks": {}}));
        let mut odd = json!({"hooks": [1]});
        assert!(apply(&mut odd, &[], &[HookSpec::new("Stop", "x")]).is_err());
        assert_eq!(odd, json!({"hooks": [1]}), "kept as it was");
        assert!(apply(&mut json!([]), &[], &[]).is_err());
    }
}
