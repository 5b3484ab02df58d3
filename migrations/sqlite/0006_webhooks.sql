-- Webhooks (issue #26 item 7): per-tenant subscriptions, a durable outbox of deliveries and each
-- delivery's attempts. Times are INTEGER microseconds since the Unix epoch, as in every SQLite table; the
-- Postgres flavour uses BIGINT microseconds too, so both backends run the same SQL (src/store/webhooks.rs).
-- Numbered 0006: 0005 is taken by another change developed at the same time (sqlx applies a missing
-- lower version whatever the order).
CREATE TABLE webhooks (
    id          TEXT    NOT NULL PRIMARY KEY,
    tenant      TEXT    NOT NULL,
    url         TEXT    NOT NULL,
    events      TEXT    NOT NULL,
    description TEXT,
    secret      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX webhooks_tenant ON webhooks (tenant, created_at, id);

CREATE TABLE webhook_deliveries (
    id              TEXT    NOT NULL PRIMARY KEY,
    webhook_id      TEXT    NOT NULL,
    tenant          TEXT    NOT NULL,
    event_id        TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    payload         TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC, id DESC);

CREATE TABLE webhook_attempts (
    delivery_id TEXT    NOT NULL,
    attempt     INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    status      INTEGER,
    error       TEXT,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
) STRICT;
