-- Threads are scoped by (tenant, agent, thread_key): the agent is the configured name of the service's agent
-- (`/v1/agents/{agent}`), '' for a library Agent built without a name. Before this migration two agents of a
-- tenant shared every thread key. Existing rows are given the agent the data says they belong to:
--   threads: the agent of the newest run on the key that started before the record was last saved (else the
--            newest run on the key, else the thread's declaration, else '');
--   events:  the agent of their run (else '');
--   receipts, continuity: the agent of the key's thread record (the active one first), else as threads.

ALTER TABLE threads ADD COLUMN agent TEXT NOT NULL DEFAULT '';
UPDATE threads SET agent = COALESCE(
    (SELECT r.agent FROM runs r WHERE r.tenant = threads.tenant AND r.thread_key = threads.thread_key
        AND r.created_at <= threads.updated_at ORDER BY r.created_at DESC, r.run_id DESC LIMIT 1),
    (SELECT r.agent FROM runs r WHERE r.tenant = threads.tenant AND r.thread_key = threads.thread_key
        ORDER BY r.created_at DESC, r.run_id DESC LIMIT 1),
    (SELECT d.agent FROM thread_declarations d WHERE d.tenant = threads.tenant
        AND d.thread_key = threads.thread_key ORDER BY d.created_at DESC, d.agent LIMIT 1),
    '');
DROP INDEX threads_active_key;
CREATE UNIQUE INDEX threads_active_key ON threads (tenant, agent, thread_key) WHERE status = 'active';

ALTER TABLE events ADD COLUMN agent TEXT NOT NULL DEFAULT '';
UPDATE events SET agent = COALESCE((SELECT r.agent FROM runs r WHERE r.run_id = events.run_id), '')
    WHERE thread_key IS NOT NULL;
DROP INDEX events_thread;
CREATE INDEX events_thread ON events (tenant, agent, thread_key, cursor) WHERE thread_key IS NOT NULL;

-- receipts carries its uniqueness in the table definition: rebuilt with the agent in it.
CREATE TABLE receipts_scoped (
    seq        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT    NOT NULL,
    agent      TEXT    NOT NULL,
    thread_key TEXT    NOT NULL,
    message_id TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    UNIQUE (tenant, agent, thread_key, message_id)
) STRICT;
INSERT INTO receipts_scoped (seq, tenant, agent, thread_key, message_id, at)
    SELECT seq, tenant, COALESCE(
        (SELECT t.agent FROM threads t WHERE t.tenant = receipts.tenant AND t.thread_key = receipts.thread_key
            ORDER BY t.status = 'active' DESC, t.updated_at DESC LIMIT 1),
        (SELECT r.agent FROM runs r WHERE r.tenant = receipts.tenant AND r.thread_key = receipts.thread_key
            ORDER BY r.created_at DESC, r.run_id DESC LIMIT 1),
        ''), thread_key, message_id, at
    FROM receipts;
DROP TABLE receipts;
ALTER TABLE receipts_scoped RENAME TO receipts;

ALTER TABLE continuity ADD COLUMN agent TEXT NOT NULL DEFAULT '';
UPDATE continuity SET agent = COALESCE(
    (SELECT t.agent FROM threads t WHERE t.tenant = continuity.tenant AND t.thread_key = continuity.thread_key
        ORDER BY t.status = 'active' DESC, t.updated_at DESC LIMIT 1),
    (SELECT r.agent FROM runs r WHERE r.tenant = continuity.tenant AND r.thread_key = continuity.thread_key
        ORDER BY r.created_at DESC, r.run_id DESC LIMIT 1),
    '');
DROP INDEX continuity_thread;
CREATE INDEX continuity_thread ON continuity (tenant, agent, thread_key, seq);

-- A thread's runs: listed per (tenant, agent, thread).
DROP INDEX runs_tenant_thread_created;
CREATE INDEX runs_tenant_thread_created ON runs (tenant, agent, thread_key, created_at DESC, run_id DESC)
    WHERE thread_key IS NOT NULL;
