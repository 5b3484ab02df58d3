-- agent-adaptor store schema, SQLite flavour. Append-only: never edit an applied migration, add a new file.
-- Timestamps are INTEGER microseconds since the Unix epoch (UTC); JSON is TEXT.

-- Thread records: at most one active record per (tenant, thread_key).
CREATE TABLE threads (
    id                        TEXT    NOT NULL PRIMARY KEY,
    tenant                    TEXT    NOT NULL,
    thread_key                TEXT    NOT NULL,
    status                    TEXT    NOT NULL,
    driver_type               TEXT    NOT NULL,
    agent_id                  TEXT    NOT NULL,
    agent_tenant              TEXT    NOT NULL,
    agent_profile             TEXT    NOT NULL,
    agent_name                TEXT    NOT NULL,
    fingerprint               TEXT    NOT NULL,
    compatibility_fingerprint TEXT    NOT NULL,
    codec                     TEXT    NOT NULL,
    state                     TEXT,
    created_at                INTEGER NOT NULL,
    updated_at                INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX threads_active_key ON threads (tenant, thread_key) WHERE status = 'active';

-- Leases: one row per target, never deleted, so fencing tokens only grow.
CREATE TABLE leases (
    target     TEXT    NOT NULL PRIMARY KEY,
    owner      TEXT    NOT NULL,
    token      INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;

-- Delivered-message receipts; seq is the insertion order used by the per-thread cap.
CREATE TABLE receipts (
    seq        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT    NOT NULL,
    thread_key TEXT    NOT NULL,
    message_id TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    UNIQUE (tenant, thread_key, message_id)
) STRICT;

-- Continuity history (recovery context), pruned on every append.
CREATE TABLE continuity (
    seq        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT    NOT NULL,
    thread_key TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    at         INTEGER NOT NULL
) STRICT;
CREATE INDEX continuity_thread ON continuity (tenant, thread_key, seq);

-- The run event log. AUTOINCREMENT: a cursor is never reused, even after retention deletes the newest rows.
CREATE TABLE events (
    cursor     INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT    NOT NULL,
    thread_key TEXT,
    run_id     TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    event      TEXT    NOT NULL,
    at         INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX events_run_seq ON events (tenant, run_id, seq);
CREATE INDEX events_thread ON events (tenant, thread_key, cursor) WHERE thread_key IS NOT NULL;
CREATE INDEX events_at ON events (at);

-- Runs of the HTTP service.
CREATE TABLE runs (
    run_id     TEXT    NOT NULL PRIMARY KEY,
    tenant     TEXT    NOT NULL,
    agent      TEXT    NOT NULL,
    thread_key TEXT,
    state      TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    result     TEXT,
    error      TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX runs_tenant ON runs (tenant, run_id);
CREATE INDEX runs_live_owner ON runs (owner) WHERE state IN ('queued', 'running', 'parked');

-- Pending approvals, resolved exactly once.
CREATE TABLE approvals (
    tenant     TEXT    NOT NULL,
    request_id TEXT    NOT NULL,
    run_id     TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    decision   TEXT,
    created_at INTEGER NOT NULL,
    deadline   INTEGER NOT NULL,
    PRIMARY KEY (tenant, request_id)
) STRICT;
CREATE INDEX approvals_run ON approvals (tenant, run_id, created_at);
CREATE INDEX approvals_pending ON approvals (deadline) WHERE state = 'pending';
