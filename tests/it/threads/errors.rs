//! The thread sentinels are produced in the cases they exist for and match by kind, not text:
//! `ResumeRejected` (a resume-only thread whose provider rejects the resume), `LeaseLost` (ownership
//! lost mid-run; the partial result stays reachable) and `CheckpointMissing` (a success without a
//! valid checkpoint).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_adaptor::driver::{Descriptor, Driver, InvalidConfig, Request, Response, RunIo, SessionCodec};
use agent_adaptor::runtime::{ErrorKind, ThreadErrorKind};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver, Script, Step};

use super::flaky::Flaky;
use super::shapes::shapes;

shapes!(
    a_rejected_resume_on_a_resume_only_thread_is_resume_rejected,
    |shape| async move {
        let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
        let first = shape.agent(ReferenceDriver::new(ReferenceConfig::default()), store.clone());
        first
            .thread("r")
            .send("hello", shape.opts())
            .result()
            .await
            .expect("first");
        // A new driver instance has no in-memory sessions: it rejects the resume.
        let other = shape.agent(ReferenceDriver::new(ReferenceConfig::default()), store);
        let err = other
            .thread_resume_only("r")
            .send("again", shape.opts())
            .result()
            .await
            .expect_err("resume-only does not fall back");
        assert_eq!(
            err.kind(),
            ErrorKind::Thread(ThreadErrorKind::ResumeRejected),
            "{shape:?}: {err}"
        );
    }
);

shapes!(
    a_lease_lost_mid_run_is_lease_lost_with_the_partial_result,
    |shape| async move {
        let flaky = Flaky::new(Arc::new(MemoryStore::new()));
        let driver = ReferenceDriver::scripted(Script::new(vec![
            Step::text("partial answer"),
            Step::Sleep(Duration::from_millis(400)),
            Step::text("never"),
        ]));
        let a = shape.agent(driver, flaky.clone());
        let t = a
            .thread("lease")
            .with_lease_timing(Duration::from_secs(5), Duration::from_millis(50));
        flaky.fail_renew.store(true, Ordering::SeqCst);
        let err = t.send("x", shape.opts()).result().await.expect_err("lost");
        assert_eq!(
            err.kind(),
            ErrorKind::Thread(ThreadErrorKind::LeaseLost),
            "{shape:?}: {err}"
        );
        let partial = err.as_run().expect("a run failure keeps its partial result");
        assert!(
            partial.result.text.contains("partial"),
            "{shape:?}: {}",
            partial.result.text
        );
        assert!(
            t.checkpoint(shape.tenant()).await.unwrap().is_none(),
            "{shape:?}: nothing persisted"
        );
    }
);

/// Declares resume and succeeds without a valid checkpoint.
struct NoCheckpoint(ReferenceDriver);

#[async_trait::async_trait]
impl Driver for NoCheckpoint {
    fn descriptor(&self) -> Descriptor {
        self.0.descriptor()
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        self.0.session_codec()
    }
    fn session_fingerprint(&self) -> Option<String> {
        self.0.session_fingerprint()
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        let mut r = self.0.run(req, io).await;
        r.checkpoint = None;
        r
    }
}

shapes!(
    a_success_without_a_checkpoint_is_checkpoint_missing,
    |shape| async move {
        let a = shape.agent(
            NoCheckpoint(ReferenceDriver::new(ReferenceConfig::default())),
            Arc::new(MemoryStore::new()),
        );
        let err = a
            .thread("nocp")
            .send("x", shape.opts())
            .result()
            .await
            .expect_err("refused");
        assert_eq!(
            err.kind(),
            ErrorKind::Thread(ThreadErrorKind::CheckpointMissing),
            "{shape:?}: {err}"
        );
        assert!(
            err.as_run().is_some(),
            "{shape:?}: the run's output stays reachable"
        );
    }
);
