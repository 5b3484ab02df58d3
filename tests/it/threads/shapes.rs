//! The three identity shapes every Thread/Standby test runs under: no identity at all, an Agent-level
//! default identity, and an explicit per-call tenant. [`shapes!`] turns one async test body into three
//! `#[tokio::test]`s (`no_identity`, `agent_default_identity`, `explicit_tenant`).

use std::sync::Arc;

use agent_adaptor::driver::{Driver, Identity};
use agent_adaptor::runtime::{Agent, AgentBuilder, CallOptions};
use agent_adaptor::store::ThreadStore;

/// How the caller's identity reaches a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Neither the Agent nor the call sets an identity (rows go to the default tenant).
    NoIdentity,
    /// The Agent has a default identity (tenant `acme`); calls set none.
    AgentDefault,
    /// Each call sets an explicit identity (tenant `t-explicit`).
    Explicit,
}

impl Shape {
    /// The tenant the shape's calls act for, as a caller names it (`""` when none was set).
    pub fn tenant(self) -> &'static str {
        match self {
            Shape::NoIdentity => "",
            Shape::AgentDefault => "acme",
            Shape::Explicit => "t-explicit",
        }
    }

    /// The tenant the store keys the shape's rows by.
    pub fn store_tenant(self) -> &'static str {
        match self {
            Shape::NoIdentity => agent_adaptor::runtime::DEFAULT_TENANT,
            other => other.tenant(),
        }
    }

    /// Adds the Agent-level default identity for [`Shape::AgentDefault`].
    pub fn builder(self, b: AgentBuilder) -> AgentBuilder {
        match self {
            Shape::AgentDefault => b.identity(Identity {
                tenant: self.tenant().into(),
                id: "agent-default".into(),
                ..Default::default()
            }),
            _ => b,
        }
    }

    /// An Agent on `driver` and `store` for this shape.
    pub fn agent(self, driver: impl Driver, store: Arc<dyn ThreadStore>) -> Agent {
        self.builder(Agent::builder(driver).thread_store(store)).build()
    }

    /// Call options carrying the shape's per-call identity (none for the first two shapes).
    pub fn opts(self) -> CallOptions {
        match self {
            Shape::Explicit => CallOptions::new().identity(Identity {
                tenant: self.tenant().into(),
                ..Default::default()
            }),
            _ => CallOptions::new(),
        }
    }
}

/// One test body run under each [`Shape`]: `shapes!(name, |shape| async move { … });`.
macro_rules! shapes {
    ($name:ident, |$shape:ident| $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn body($shape: $crate::threads::shapes::Shape) {
                $body.await
            }

            #[tokio::test]
            async fn no_identity() {
                body($crate::threads::shapes::Shape::NoIdentity).await
            }

            #[tokio::test]
            async fn agent_default_identity() {
                body($crate::threads::shapes::Shape::AgentDefault).await
            }

            #[tokio::test]
            async fn explicit_tenant() {
                body($crate::threads::shapes::Shape::Explicit).await
            }
        }
    };
}
pub(crate) use shapes;
