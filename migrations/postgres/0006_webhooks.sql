-- Webhooks (issue #26 item 7): per-tenant subscriptions, a durable outbox of deliveries and each
-- delivery's attempts. Times are BIGINT microseconds since the Unix epoch (not timestamptz) so that
-- SQLite and Postgres run the same SQL (src/store/webhooks.rs); the delivery worker uses the process
-- clock, as a retry schedule needs no referee.
-- Numbered 0006: 0005 is taken by another change developed at the same time (sqlx applies a missing
-- lower version whatever the order).
CREATE TABLE webhooks (
    id          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tenant      TEXT COLLATE "C" NOT NULL,
    url         TEXT   NOT NULL,
    events      TEXT   NOT NULL,
    description TEXT,
    secret      TEXT   NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX webhooks_tenant ON webhooks (tenant, created_at, id);

CREATE TABLE webhook_deliveries (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    webhook_id      TEXT COLLATE "C" NOT NULL,
    tenant          TEXT COLLATE "C" NOT NULL,
    event_id        TEXT COLLATE "C" NOT NULL,
    event_type      TEXT   NOT NULL,
    payload         TEXT   NOT NULL,
    state           TEXT   NOT NULL,
    attempts        BIGINT NOT NULL,
    next_attempt_at BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC, id DESC);

CREATE TABLE webhook_attempts (
    delivery_id TEXT COLLATE "C" NOT NULL,
    attempt     BIGINT NOT NULL,
    at          BIGINT NOT NULL,
    status      BIGINT,
    error       TEXT,
    duration_ms BIGINT NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
);
