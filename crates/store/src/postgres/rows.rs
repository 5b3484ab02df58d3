//! Postgres row shapes (`timestamptz`, `jsonb`, `bigint`) and their conversion into domain values.
//! Conversion failures are `Corrupt` errors naming the row.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::FromRow;

use crate::decode::at;
use crate::{
    AgentIdentity, Approval, ApprovalState, EventRecord, Record, RunRecord, RunState, StoreResult,
    ThreadStatus,
};

/// One `threads` row.
#[derive(FromRow)]
pub(super) struct ThreadRow {
    id: String,
    tenant: String,
    agent: String,
    thread_key: String,
    status: String,
    driver_type: String,
    agent_id: String,
    agent_tenant: String,
    agent_profile: String,
    agent_name: String,
    fingerprint: String,
    compatibility_fingerprint: String,
    codec: String,
    state: Option<Value>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl ThreadRow {
    pub(super) fn into_record(self) -> StoreResult<Record> {
        let row = at("threads", &self.id);
        Ok(Record {
            status: row.text_enum("status", &self.status, ThreadStatus::parse)?,
            state: self
                .state
                .map(|state| row.json_value("state", super::nul::decode(state)))
                .transpose()?,
            created_at: self.created_at,
            updated_at: self.updated_at,
            agent: AgentIdentity {
                id: self.agent_id,
                tenant: self.agent_tenant,
                profile: self.agent_profile,
                name: self.agent_name,
            },
            driver_type: self.driver_type,
            fingerprint: self.fingerprint,
            compatibility_fingerprint: self.compatibility_fingerprint,
            codec: self.codec,
            key: self.thread_key,
            tenant: self.tenant,
            host_agent: self.agent,
            id: self.id,
        })
    }
}

/// One `events` row.
#[derive(FromRow)]
pub(super) struct EventRow {
    cursor: i64,
    tenant: String,
    agent: String,
    thread_key: Option<String>,
    run_id: String,
    seq: i64,
    kind: String,
    event: Value,
    at: DateTime<Utc>,
}

impl EventRow {
    pub(super) fn into_record(self) -> StoreResult<EventRecord> {
        let row = at("events", &self.cursor);
        Ok(EventRecord {
            cursor: row.unsigned("cursor", self.cursor)?,
            seq: row.unsigned("seq", self.seq)?,
            event: super::nul::decode(self.event),
            at: self.at,
            tenant: self.tenant,
            agent: self.agent,
            thread_key: self.thread_key,
            run_id: self.run_id,
            kind: self.kind,
        })
    }
}

/// One `runs` row.
#[derive(FromRow)]
pub(super) struct RunRow {
    run_id: String,
    tenant: String,
    agent: String,
    thread_key: Option<String>,
    state: String,
    owner: String,
    result: Option<Value>,
    error: Option<Value>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl RunRow {
    pub(super) fn into_record(self) -> StoreResult<RunRecord> {
        let row = at("runs", &self.run_id);
        Ok(RunRecord {
            state: row.text_enum("state", &self.state, RunState::parse)?,
            result: self.result.map(super::nul::decode),
            error: self.error.map(super::nul::decode),
            created_at: self.created_at,
            updated_at: self.updated_at,
            run_id: self.run_id,
            tenant: self.tenant,
            agent: self.agent,
            thread_key: self.thread_key,
            owner: self.owner,
        })
    }
}

/// One `approvals` row.
#[derive(FromRow)]
pub(super) struct ApprovalRow {
    tenant: String,
    request_id: String,
    run_id: String,
    kind: String,
    payload: Value,
    state: String,
    decision: Option<Value>,
    created_at: DateTime<Utc>,
    deadline: DateTime<Utc>,
}

impl ApprovalRow {
    pub(super) fn into_approval(self) -> StoreResult<Approval> {
        let id = format!("{}/{}", self.tenant, self.request_id);
        let row = at("approvals", &id);
        Ok(Approval {
            state: row.text_enum("state", &self.state, ApprovalState::parse)?,
            payload: super::nul::decode(self.payload),
            decision: self.decision.map(super::nul::decode),
            created_at: self.created_at,
            deadline: self.deadline,
            tenant: self.tenant,
            request_id: self.request_id,
            run_id: self.run_id,
            kind: self.kind,
        })
    }
}

/// Collects converted rows, stopping at the first corrupt one.
pub(super) fn collect<R, T>(rows: Vec<R>, convert: fn(R) -> StoreResult<T>) -> StoreResult<Vec<T>> {
    rows.into_iter().map(convert).collect()
}
