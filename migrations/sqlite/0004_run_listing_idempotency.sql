-- Run listing: newest first per tenant, optionally per agent or thread (keyset on created_at, run_id).
CREATE INDEX runs_tenant_created ON runs (tenant, created_at DESC, run_id DESC);
CREATE INDEX runs_tenant_thread_created ON runs (tenant, thread_key, created_at DESC, run_id DESC)
    WHERE thread_key IS NOT NULL;
CREATE INDEX runs_created ON runs (created_at DESC, run_id DESC);

-- Idempotency keys: per tenant, a request's hash, its claim and, once completed, the answer to replay.
CREATE TABLE idempotency_keys (
    tenant       TEXT    NOT NULL,
    idem_key     TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    token        TEXT    NOT NULL,
    state        TEXT    NOT NULL,
    status       INTEGER,
    content_type TEXT,
    location     TEXT,
    body         TEXT,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (tenant, idem_key)
) STRICT;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
