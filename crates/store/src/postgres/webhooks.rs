//! Webhook subscriptions and deliveries on Postgres (migration 0006): the SQL shared with SQLite
//! ([`crate::webhooks_sql`]). A claim is one compare-and-set `UPDATE`, so of several replicas
//! exactly one takes a due delivery.

use super::PostgresStore;

crate::webhooks_sql::sql_webhook_store!(
    PostgresStore,
    read = |s| &s.pool,
    write = |s| &s.pool,
    begin = |s| s.pool.begin(),
);
