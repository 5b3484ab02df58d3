//! Rules every backend applies the same way: limits, validation, the continuity selection, clock
//! precision and integer conversions. Pure functions, no I/O.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use super::error::StoreError;
use super::types::{ContinuityEntry, ContinuityKind, FinalizeRequest, Page, RunState, ThreadStatus};

/// The most items one page or one read returns; larger limits are clamped.
pub const MAX_PAGE: u32 = 10_000;
/// Receipts kept per thread; the oldest (by insertion) are pruned beyond this.
pub const RECEIPT_CAP: usize = 1000;
/// Receipts older than this (relative to the `at` of the write that prunes) are pruned.
pub const RECEIPT_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// Assistant turns kept in the recovery context.
pub const CONTINUITY_TURNS: usize = 3;
/// The recovery context's total text budget, in bytes of UTF-8.
pub const CONTINUITY_BUDGET: usize = 8 * 1024;

/// The current time at the precision every backend stores (microseconds).
pub fn now() -> DateTime<Utc> {
    micros(Utc::now())
}

/// Truncates to microseconds, so a value reads back exactly as written on every backend.
pub fn micros(at: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(at.timestamp_micros()).unwrap_or(at)
}

/// Microseconds since the Unix epoch (the SQLite column representation).
#[cfg_attr(not(feature = "sql"), allow(dead_code))]
pub(crate) fn to_micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

/// The inverse of [`to_micros`]; `None` when out of chrono's range.
#[cfg_attr(not(feature = "sql"), allow(dead_code))]
pub(crate) fn from_micros(us: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(us)
}

/// The effective limit of a page as an SQL `LIMIT`.
pub(crate) fn limit(limit: u32) -> i64 {
    i64::from(limit.min(MAX_PAGE))
}

/// The effective limit of a page as a `usize`.
pub(crate) fn limit_usize(page: &Page) -> usize {
    page.limit.min(MAX_PAGE) as usize
}

/// A lease TTL as a chrono delta: it must be positive and representable.
pub(crate) fn ttl(ttl: Duration) -> Result<TimeDelta, StoreError> {
    if ttl.is_zero() {
        return Err(StoreError::invalid("lease TTL must be positive"));
    }
    TimeDelta::from_std(ttl)
        .ok()
        .filter(|d| *d <= TimeDelta::days(36_500))
        .ok_or_else(|| StoreError::invalid("lease TTL is too large"))
}

/// A lease TTL in whole microseconds (at least one).
#[cfg_attr(not(feature = "sql"), allow(dead_code))]
pub(crate) fn ttl_micros(ttl_: Duration) -> Result<i64, StoreError> {
    Ok(ttl(ttl_)?.num_microseconds().unwrap_or(i64::MAX).max(1))
}

/// A retention age as a chrono delta (saturating at a very large age).
pub(crate) fn age(age: Duration) -> TimeDelta {
    TimeDelta::from_std(age)
        .unwrap_or(TimeDelta::MAX)
        .min(TimeDelta::days(365_000))
}

/// A caller-supplied `u64` as the `i64` SQL stores.
pub(crate) fn to_i64(value: u64, what: &str) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::invalid(format!("{what} {value} exceeds i64::MAX")))
}

/// Rejects empty identifiers.
pub(crate) fn require(name: &str, value: &str) -> Result<(), StoreError> {
    if value.is_empty() {
        return Err(StoreError::invalid(format!("{name} must not be empty")));
    }
    if value.contains('\0') {
        // Postgres text cannot hold NUL; every backend refuses it alike (STORE-21).
        return Err(StoreError::invalid(format!(
            "{name} must not contain NUL (U+0000)"
        )));
    }
    Ok(())
}

/// Rejects NUL in a name that may be empty (an Agent's name, `""` when it has none).
pub(crate) fn no_nul(name: &str, value: &str) -> Result<(), StoreError> {
    if value.contains('\0') {
        return Err(StoreError::invalid(format!(
            "{name} must not contain NUL (U+0000)"
        )));
    }
    Ok(())
}

/// Checks the shape of a finalize request before any backend touches storage.
pub(crate) fn check_finalize(req: &FinalizeRequest) -> Result<(), StoreError> {
    let record = &req.record;
    require("record id", &record.id)?;
    require("record key", &record.key)?;
    require("record tenant", &record.tenant)?;
    no_nul("record agent", &record.host_agent)?;
    if record.status != ThreadStatus::Active {
        return Err(StoreError::invalid("finalize saves an active record"));
    }
    if req.archive_old && req.previous_id.as_deref() == Some(record.id.as_str()) {
        return Err(StoreError::invalid("previous_id must differ from the record id"));
    }
    for lease in &req.held_leases {
        require("lease target", &lease.target)?;
    }
    Ok(())
}

/// Decides, before anything is written, what finalize does about the key's current active record:
/// refuse (`AlreadyExists` for the fork compare-and-set, `Conflict` for an unasked-for replacement), or
/// name the other record to archive. `active` is the id of the key's active record, if any, as it stands
/// before this request.
pub(crate) fn plan_key(req: &FinalizeRequest, active: Option<&str>) -> Result<Option<String>, StoreError> {
    let record = &req.record;
    if req.require_key_absent && active.is_some() {
        return Err(StoreError::AlreadyExists {
            key: record.key.clone(),
        });
    }
    let Some(other) = active.filter(|other| *other != record.id) else {
        return Ok(None);
    };
    if req.rebind_active {
        return Ok(Some(other.to_owned()));
    }
    if req.archive_old && req.previous_id.as_deref() == Some(other) {
        return Ok(None);
    }
    Err(StoreError::conflict(format!(
        "key {:?} has another active record; finalize with rebind_active to replace it",
        record.key
    )))
}

/// Whether a run in `from` may move to `to`: terminal states are final.
pub(crate) fn check_transition(run_id: &str, from: RunState, to: RunState) -> Result<(), StoreError> {
    if from.is_terminal() {
        return Err(StoreError::conflict(format!(
            "run {run_id:?} is already {from}; cannot move it to {to}"
        )));
    }
    Ok(())
}

/// Chooses the recovery context from a thread's continuity history.
///
/// `entries` is oldest first. Walking from the newest, it keeps every guidance entry and the newest
/// [`CONTINUITY_TURNS`] assistant turns until the text budget is spent; the first entry that does not fit
/// ends the walk (older material is trimmed, never newer). If even the newest entry is larger than the
/// budget, its newest bytes are kept. Returns `(index, text)` pairs, oldest first; everything not returned
/// can be deleted without changing any later answer.
pub(crate) fn select_continuity(entries: &[ContinuityEntry]) -> Vec<(usize, String)> {
    let mut kept = Vec::new();
    let mut budget = CONTINUITY_BUDGET;
    let mut turns = 0;
    for (index, entry) in entries.iter().enumerate().rev() {
        if entry.kind == ContinuityKind::AssistantTurn {
            if turns == CONTINUITY_TURNS {
                continue;
            }
            turns += 1;
        }
        if entry.text.len() <= budget {
            budget -= entry.text.len();
            kept.push((index, entry.text.clone()));
        } else {
            if kept.is_empty() {
                kept.push((index, tail(&entry.text, budget).to_owned()));
            }
            break;
        }
    }
    kept.reverse();
    kept
}

/// The longest suffix of `text` that is at most `max` bytes and starts on a character boundary.
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: ContinuityKind, text: &str) -> ContinuityEntry {
        ContinuityEntry {
            kind,
            text: text.to_owned(),
            at: now(),
        }
    }

    #[test]
    fn keeps_guidance_and_last_three_turns_in_order() {
        use ContinuityKind::*;
        let entries = vec![
            entry(Guidance, "g1"),
            entry(AssistantTurn, "a1"),
            entry(AssistantTurn, "a2"),
            entry(Guidance, "g2"),
            entry(AssistantTurn, "a3"),
            entry(AssistantTurn, "a4"),
        ];
        let texts: Vec<String> = select_continuity(&entries).into_iter().map(|(_, t)| t).collect();
        assert_eq!(texts, ["g1", "a2", "g2", "a3", "a4"]);
    }

    #[test]
    fn budget_trims_oldest_and_cuts_an_oversized_newest_entry_on_a_char_boundary() {
        use ContinuityKind::*;
        let big = "x".repeat(5000);
        let entries = vec![
            entry(Guidance, "old"),
            entry(Guidance, &big),
            entry(AssistantTurn, &big),
        ];
        let kept = select_continuity(&entries);
        assert_eq!(kept.len(), 1, "the second 5000-byte entry does not fit");
        assert_eq!(kept[0].0, 2);

        let huge = format!("{}é", "y".repeat(CONTINUITY_BUDGET));
        let kept = select_continuity(&[entry(Guidance, "old"), entry(AssistantTurn, &huge)]);
        assert_eq!(kept.len(), 1);
        assert!(kept[0].1.len() <= CONTINUITY_BUDGET);
        assert!(kept[0].1.ends_with('é'));
    }

    #[test]
    fn ttl_must_be_positive() {
        assert!(ttl(Duration::ZERO).is_err());
        assert_eq!(ttl_micros(Duration::from_nanos(1)).unwrap(), 1);
        assert!(ttl(Duration::from_secs(u64::MAX)).is_err());
    }

    #[test]
    fn plan_key_decides_before_writing() {
        use crate::{AgentIdentity, Record};
        let at = now();
        let record = Record {
            id: "new".into(),
            key: "k".into(),
            tenant: "t".into(),
            host_agent: String::new(),
            status: ThreadStatus::Active,
            driver_type: String::new(),
            agent: AgentIdentity::default(),
            fingerprint: String::new(),
            compatibility_fingerprint: String::new(),
            codec: String::new(),
            state: None,
            created_at: at,
            updated_at: at,
        };
        let req = |archive_old, rebind_active, require_key_absent| FinalizeRequest {
            record: record.clone(),
            previous_id: Some("old".into()),
            held_leases: vec![],
            archive_old,
            rebind_active,
            require_key_absent,
        };
        assert_eq!(plan_key(&req(false, false, false), None), Ok(None));
        assert_eq!(
            plan_key(&req(false, false, false), Some("new")),
            Ok(None),
            "updating in place"
        );
        assert_eq!(
            plan_key(&req(false, true, false), Some("old")),
            Ok(Some("old".into()))
        );
        assert_eq!(
            plan_key(&req(true, false, false), Some("old")),
            Ok(None),
            "archived as previous"
        );
        assert!(matches!(
            plan_key(&req(false, false, false), Some("old")),
            Err(StoreError::Conflict { .. })
        ));
        assert!(matches!(
            plan_key(&req(true, true, true), Some("old")),
            Err(StoreError::AlreadyExists { .. })
        ));
    }

    #[test]
    fn terminal_runs_do_not_move() {
        assert!(check_transition("r", RunState::Running, RunState::Succeeded).is_ok());
        assert!(matches!(
            check_transition("r", RunState::Failed, RunState::Running),
            Err(StoreError::Conflict { .. })
        ));
    }
}
