//! Webhook subscriptions and deliveries on Postgres (migration 0006): the SQL shared with SQLite
//! ([`crate::store::webhooks_sql`]). A claim is one compare-and-set `UPDATE`, so of several replicas
//! exactly one takes a due delivery.

use super::PostgresStore;

crate::store::webhooks_sql::sql_webhook_store!(
    PostgresStore,
    read = |s| &s.pool,
    write = |s| &s.pool,
    begin = |s| s.pool.begin(),
);
