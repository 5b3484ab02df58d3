//! Webhook subscriptions and deliveries on SQLite (migration 0006): the SQL shared with Postgres
//! ([`crate::webhooks_sql`]), reads on the reader pool, writes on the single writer, each write
//! transaction taking the write lock at its start (`BEGIN IMMEDIATE`).

use super::SqliteStore;

crate::webhooks_sql::sql_webhook_store!(
    SqliteStore,
    read = |s| &s.reader,
    write = |s| &s.writer,
    begin = |s| s.writer.begin_with("BEGIN IMMEDIATE"),
);
