//! Column lists shared by the SQLite and Postgres backends (the tables have the same column names in
//! both), as macros so every query built with `concat!` stays a `&'static str`.

/// The columns of `threads`, in `SELECT` order.
macro_rules! thread_columns {
    () => {
        "id, tenant, agent, thread_key, status, driver_type, agent_id, agent_tenant, agent_profile, agent_name, \
         fingerprint, compatibility_fingerprint, codec, state, created_at, updated_at"
    };
}
/// The columns of `events`, in `SELECT` order.
macro_rules! event_columns {
    () => {
        "cursor, tenant, agent, thread_key, run_id, seq, kind, event, at"
    };
}
/// The columns of `runs`, in `SELECT` order.
macro_rules! run_columns {
    () => {
        "run_id, tenant, agent, thread_key, state, owner, result, error, created_at, updated_at"
    };
}
/// The columns of `approvals`, in `SELECT` order.
macro_rules! approval_columns {
    () => {
        "tenant, request_id, run_id, kind, payload, state, decision, created_at, deadline"
    };
}
