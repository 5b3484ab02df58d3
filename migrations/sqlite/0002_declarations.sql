-- Threads declared by a host before their first run (the service's create and fork): run defaults and a
-- fork's parent, so a restart does not forget them.
CREATE TABLE thread_declarations (
    tenant      TEXT    NOT NULL,
    agent       TEXT    NOT NULL,
    thread_key  TEXT    NOT NULL,
    defaults    TEXT    NOT NULL,
    forked_from TEXT,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant, agent, thread_key)
) STRICT;
