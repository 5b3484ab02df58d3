-- Metered usage, one row per finished run: tokens, estimated cost (micro-USD), CLI wall and CPU time.
-- Accounting data: the event-log retention does not delete it.
CREATE TABLE run_usage (
    run_id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tenant              TEXT COLLATE "C" NOT NULL,
    agent               TEXT COLLATE "C" NOT NULL,
    thread_key          TEXT COLLATE "C",
    model               TEXT        NOT NULL,
    state               TEXT        NOT NULL,
    input_tokens        BIGINT      NOT NULL,
    output_tokens       BIGINT      NOT NULL,
    cached_input_tokens BIGINT      NOT NULL,
    cost_micros         BIGINT      NOT NULL,
    wall_ms             BIGINT      NOT NULL,
    cpu_ms              BIGINT      NOT NULL,
    started_at          TIMESTAMPTZ NOT NULL,
    ended_at            TIMESTAMPTZ NOT NULL
);
CREATE INDEX run_usage_tenant ON run_usage (tenant, ended_at);
