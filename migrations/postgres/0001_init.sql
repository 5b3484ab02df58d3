-- agent-adaptor store schema, Postgres flavour. Append-only: never edit an applied migration, add a new file.
-- Identifier columns use the "C" collation: byte order, the same order SQLite and the memory store page by.

-- Thread records: at most one active record per (tenant, thread_key).
CREATE TABLE threads (
    id                        TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tenant                    TEXT COLLATE "C" NOT NULL,
    thread_key                TEXT COLLATE "C" NOT NULL,
    status                    TEXT        NOT NULL,
    driver_type               TEXT        NOT NULL,
    agent_id                  TEXT        NOT NULL,
    agent_tenant              TEXT        NOT NULL,
    agent_profile             TEXT        NOT NULL,
    agent_name                TEXT        NOT NULL,
    fingerprint               TEXT        NOT NULL,
    compatibility_fingerprint TEXT        NOT NULL,
    codec                     TEXT        NOT NULL,
    state                     JSONB,
    created_at                TIMESTAMPTZ NOT NULL,
    updated_at                TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX threads_active_key ON threads (tenant, thread_key) WHERE status = 'active';

-- Leases: one row per target, never deleted, so fencing tokens only grow.
CREATE TABLE leases (
    target     TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    owner      TEXT        NOT NULL,
    token      BIGINT      NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

-- Delivered-message receipts; seq is the insertion order used by the per-thread cap.
CREATE TABLE receipts (
    seq        BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant     TEXT COLLATE "C" NOT NULL,
    thread_key TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL,
    at         TIMESTAMPTZ NOT NULL,
    UNIQUE (tenant, thread_key, message_id)
);

-- Continuity history (recovery context), pruned on every append.
CREATE TABLE continuity (
    seq        BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant     TEXT COLLATE "C" NOT NULL,
    thread_key TEXT COLLATE "C" NOT NULL,
    kind       TEXT        NOT NULL,
    body       TEXT        NOT NULL,
    at         TIMESTAMPTZ NOT NULL
);
CREATE INDEX continuity_thread ON continuity (tenant, thread_key, seq);

-- The run event log. Cursors come from an identity sequence (never reused); appenders of one thread are
-- serialized by a transaction-scoped advisory lock, so cursors of a thread increase in commit order.
-- `event` is `json`, not `jsonb`: the log is never queried inside events, `json` is cheaper to write and
-- replays the exact text. Indexes are the minimum the reads need (each costs append throughput): the
-- natural key (tenant, run_id, seq) is the primary key (duplicate detection and read_run), a partial
-- index serves read_thread, a BRIN index serves retention by age.
CREATE TABLE events (
    cursor     BIGINT      GENERATED ALWAYS AS IDENTITY,
    tenant     TEXT COLLATE "C" NOT NULL,
    thread_key TEXT COLLATE "C",
    run_id     TEXT COLLATE "C" NOT NULL,
    seq        BIGINT      NOT NULL,
    kind       TEXT        NOT NULL,
    event      JSON        NOT NULL,
    at         TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant, run_id, seq)
);
CREATE INDEX events_thread ON events (tenant, thread_key, cursor) WHERE thread_key IS NOT NULL;
CREATE INDEX events_at ON events USING brin (at);

-- Runs of the HTTP service.
CREATE TABLE runs (
    run_id     TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tenant     TEXT COLLATE "C" NOT NULL,
    agent      TEXT        NOT NULL,
    thread_key TEXT COLLATE "C",
    state      TEXT        NOT NULL,
    owner      TEXT        NOT NULL,
    result     JSONB,
    error      JSONB,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX runs_tenant ON runs (tenant, run_id);
CREATE INDEX runs_live_owner ON runs (owner) WHERE state IN ('queued', 'running', 'parked');

-- Pending approvals, resolved exactly once.
CREATE TABLE approvals (
    tenant     TEXT COLLATE "C" NOT NULL,
    request_id TEXT COLLATE "C" NOT NULL,
    run_id     TEXT COLLATE "C" NOT NULL,
    kind       TEXT        NOT NULL,
    payload    JSONB       NOT NULL,
    state      TEXT        NOT NULL,
    decision   JSONB,
    created_at TIMESTAMPTZ NOT NULL,
    deadline   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant, request_id)
);
CREATE INDEX approvals_run ON approvals (tenant, run_id, created_at);
CREATE INDEX approvals_pending ON approvals (deadline) WHERE state = 'pending';
