//! Agent lifecycle: close is idempotent and bounded, cancels admitted work, and later sends fail
//! with the closed error.

use std::time::Duration;

use agent_adaptor::runtime::{Agent, ErrorKind, FailureReason};
use agent_adaptor::testkit::reference::{ReferenceDriver, Script, Step};

#[tokio::test]
async fn close_cancels_drains_and_refuses_later_sends() {
    let agent = Agent::new(ReferenceDriver::scripted(Script::new(vec![Step::Sleep(
        Duration::from_secs(60),
    )])));
    let running = agent.send("x", ());
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(agent.active_executions(), 1);
    agent.close(Duration::from_secs(5)).await.unwrap();
    assert_eq!(agent.active_executions(), 0, "admitted work is drained");
    assert_eq!(
        running.result().await.unwrap_err().reason(),
        Some(FailureReason::Cancelled)
    );
    assert_eq!(
        agent.send("y", ()).result().await.unwrap_err().kind(),
        ErrorKind::AgentClosed
    );
    agent
        .close(Duration::from_secs(1))
        .await
        .expect("close is idempotent");
}
