-- Metered usage, one row per finished run: tokens, estimated cost (micro-USD), CLI wall and CPU time.
-- Accounting data: the event-log retention does not delete it.
CREATE TABLE run_usage (
    run_id              TEXT    NOT NULL PRIMARY KEY,
    tenant              TEXT    NOT NULL,
    agent               TEXT    NOT NULL,
    thread_key          TEXT,
    model               TEXT    NOT NULL,
    state               TEXT    NOT NULL,
    input_tokens        INTEGER NOT NULL,
    output_tokens       INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL,
    cost_micros         INTEGER NOT NULL,
    wall_ms             INTEGER NOT NULL,
    cpu_ms              INTEGER NOT NULL,
    started_at          INTEGER NOT NULL,
    ended_at            INTEGER NOT NULL
) STRICT;
CREATE INDEX run_usage_tenant ON run_usage (tenant, ended_at);
