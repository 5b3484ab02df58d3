-- Threads declared by a host before their first run (the service's create and fork): run defaults and a
-- fork's parent, so a restart does not forget them.
CREATE TABLE thread_declarations (
    tenant      TEXT COLLATE "C" NOT NULL,
    agent       TEXT COLLATE "C" NOT NULL,
    thread_key  TEXT COLLATE "C" NOT NULL,
    defaults    JSONB       NOT NULL,
    forked_from TEXT COLLATE "C",
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant, agent, thread_key)
);
