//! One `Idempotency-Key` hammered by many requests that are each refused (claim, then release: what a 4xx
//! answer does): every claim answers a typed outcome — claimed, in progress, mismatch — never a store
//! error. (A claim that lost its row to a release between its upsert and its read once retried four times
//! and then failed as a 500 `store_error`; schemathesis found it with two workers reusing the key "0".)

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::store::{self, ClaimOutcome, IdempotencyClaim, ThreadStore};

const TASKS: usize = 8;
const ROUNDS: usize = 150;

async fn hammer(store: Arc<dyn ThreadStore>) {
    let tasks = (0..TASKS).map(|t| {
        let store = store.clone();
        tokio::spawn(async move {
            let mut claimed = 0;
            for r in 0..ROUNDS {
                let claim = IdempotencyClaim {
                    tenant: "default".into(),
                    key: "0".into(),
                    request_hash: format!("hash-{t}-{}", r % 3),
                    token: format!("token-{t}-{r}"),
                    at: agent_adaptor::store::now(),
                    lapse: Duration::from_secs(120),
                    keep: Duration::from_secs(86_400),
                };
                match store.claim_idempotency(&claim).await {
                    Ok(ClaimOutcome::Claimed) => {
                        claimed += 1;
                        store
                            .release_idempotency(&claim.tenant, &claim.key, &claim.token)
                            .await
                            .expect("a release");
                    }
                    Ok(_) => {}
                    Err(e) => panic!("task {t} round {r}: the claim failed: {e}"),
                }
            }
            claimed
        })
    });
    let claimed: usize = futures::future::join_all(tasks)
        .await
        .into_iter()
        .map(Result::unwrap)
        .sum();
    assert!(claimed > 0, "some claims won");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contention_a_contended_key_never_fails_a_claim_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("store.db").display());
    hammer(store::open(&url).await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contention_a_contended_key_never_fails_a_claim_on_postgres() {
    let Some(url) = super::pg::database_url("contention_a_contended_key_never_fails_a_claim_on_postgres")
    else {
        return;
    };
    let shared = url.clone();
    super::pg::with_schema(&url, move |schema| async move {
        hammer(Arc::new(super::pg::store_in(&shared, &schema).await)).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contention_a_contended_key_never_fails_a_claim_in_memory() {
    hammer(store::in_memory()).await;
}
