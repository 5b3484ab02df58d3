//! One execution's services: ensure (manager) and attach (providers) before driver entry, the
//! environment and MCP servers they publish, their prompt preamble, their event sources folded into
//! the run's stream, results collected before detach, and a bounded, fair cleanup (every
//! `release_by_run`/`detach_run` runs concurrently with the whole bound, so a hanging one costs the
//! others nothing) whose errors the execution joins to its outcome before `Done`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{RunServiceProvider, ServiceManager, ServiceRequest};
use crate::driver::Descriptor;
use crate::runtime::admission::check_mcp;
use crate::runtime::broker::Broker;
use crate::runtime::error::{ConfigError, Error};
use crate::runtime::event::Payload;
use crate::runtime::result::SubagentResult;
use crate::vocab::{McpServer, McpTransport, ServiceOrigin, ServiceRef, ServiceReport, ServiceSpec};

/// The default bound of the service cleanup (source flush, then release and detach).
pub(crate) const CLEANUP_BOUND: Duration = Duration::from_secs(30);

/// How one execution gets its services.
#[derive(Clone)]
pub(crate) struct ServicePlan {
    pub manager: Option<Arc<dyn ServiceManager>>,
    pub providers: Vec<Arc<dyn RunServiceProvider>>,
    pub desired: Vec<ServiceSpec>,
    pub bound: Duration,
}

impl std::fmt::Debug for ServicePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServicePlan")
            .field("manager", &self.manager.is_some())
            .field("providers", &self.providers.len())
            .field("desired", &self.desired)
            .field("bound", &self.bound)
            .finish()
    }
}

/// A failure while starting the services (the driver is not entered).
#[derive(Debug)]
pub(crate) struct StartError {
    /// `service_unavailable`, `service_attach_failed`, `cancelled` or the code of the refused
    /// publication (`invalid_mcp_config`, `mcp_transport_unsupported`, …).
    pub code: String,
    pub message: String,
}

/// What the services add to each driver request.
#[derive(Debug, Default, Clone)]
pub(crate) struct Published {
    /// Public and secret environment (reaches the provider process only).
    pub env: BTreeMap<String, String>,
    /// MCP servers, appended to the declared set.
    pub mcp: Vec<McpServer>,
}

impl Published {
    /// What the thread compatibility fingerprint takes from the publication: the variable names and
    /// each MCP server's name and transport, never values or URLs (a service's ephemeral port must
    /// not break resume). Empty when nothing was published.
    pub(crate) fn fingerprint(&self) -> String {
        if self.env.is_empty() && self.mcp.is_empty() {
            return String::new();
        }
        let mut mcp: Vec<String> = self
            .mcp
            .iter()
            .map(|m| format!("{}:{}", m.name, m.transport.name()))
            .collect();
        mcp.sort();
        let env: Vec<&str> = self.env.keys().map(String::as_str).collect();
        format!("env={}\u{1f}mcp={}", env.join(","), mcp.join(","))
    }
}

/// The live services of one execution.
pub(crate) struct RunServices {
    plan: ServicePlan,
    run_id: String,
    /// `ensure` was called: `release_by_run` is owed.
    ensured: bool,
    /// Providers whose `attach_run` was called: `detach_run` is owed to each.
    attached: Vec<Arc<dyn RunServiceProvider>>,
    /// Published services, with their origin and (for run services) their provider's index.
    refs: Vec<(ServiceRef, ServiceOrigin, usize)>,
    preamble: Vec<String>,
    results: Vec<super::RunResults>,
    sources: Vec<JoinHandle<()>>,
    source_cancel: CancellationToken,
}

/// Payloads whose lifecycle the core owns: never taken from a source.
fn core_owned(p: &Payload) -> bool {
    matches!(
        p,
        Payload::RunStarted(_)
            | Payload::RunFinished(_)
            | Payload::TurnEnd(_)
            | Payload::MessageUpdate(_)
            | Payload::Dropped(_)
            | Payload::Done(_)
    )
}

impl ServicePlan {
    /// True when there is nothing to do.
    pub(crate) fn is_empty(&self) -> bool {
        self.desired.is_empty() && self.providers.is_empty()
    }

    /// Ensures the desired services and attaches every provider (in order), starting their event
    /// sources. On failure the returned services still hold what must be cleaned up.
    pub(crate) async fn start(
        &self,
        req: ServiceRequest,
        broker: &Arc<Broker>,
        cancel: &CancellationToken,
    ) -> (RunServices, Result<(), StartError>) {
        let mut live = RunServices {
            plan: self.clone(),
            run_id: req.run_id.clone(),
            ensured: false,
            attached: Vec::new(),
            refs: Vec::new(),
            preamble: Vec::new(),
            results: Vec::new(),
            sources: Vec::new(),
            source_cancel: cancel.child_token(),
        };
        let outcome = tokio::select! {
            r = live.start(req, broker) => r,
            _ = cancel.cancelled() => Err(StartError {
                code: "cancelled".into(),
                message: "cancelled while starting services".into(),
            }),
        };
        (live, outcome)
    }
}

impl RunServices {
    async fn start(&mut self, req: ServiceRequest, broker: &Arc<Broker>) -> Result<(), StartError> {
        let run_id = req.run_id.clone();
        if let Some(manager) = self.plan.manager.clone()
            && !req.desired.is_empty()
        {
            self.ensured = true;
            let refs = manager.ensure(req).await.map_err(|e| StartError {
                code: "service_unavailable".into(),
                message: format!("ensuring services failed: {e}"),
            })?;
            self.refs
                .extend(refs.into_iter().map(|r| (r, ServiceOrigin::Manager, 0)));
        }
        for provider in self.plan.providers.clone() {
            let index = self.attached.len();
            self.attached.push(provider.clone());
            let att = provider.attach_run(&run_id).await.map_err(|e| StartError {
                code: "service_attach_failed".into(),
                message: format!("attaching run service {} failed: {e}", provider.name()),
            })?;
            if !att.preamble.trim().is_empty() {
                self.preamble.push(att.preamble);
            }
            self.results.extend(att.results);
            self.refs
                .extend(att.services.into_iter().map(|r| (r, ServiceOrigin::Run, index)));
            if let Some(source) = att.events {
                let mut stream = source(self.source_cancel.clone(), run_id.clone());
                let broker = broker.clone();
                self.sources
                    .push(tokio::spawn(super::super::identity::carry(async move {
                        while let Some(p) = stream.next().await {
                            if !core_owned(&p) {
                                broker.publish(p, None).await;
                            }
                        }
                    })));
            }
        }
        Ok(())
    }

    /// The preamble block to prepend to the prompt (empty, or the attachments' preambles followed by
    /// a blank line).
    pub(crate) fn preamble(&self) -> String {
        match self.preamble.is_empty() {
            true => String::new(),
            false => format!("{}\n\n", self.preamble.join("\n\n")),
        }
    }

    /// The environment the services publish (public and secret), refusing a variable two services
    /// (or a service and `reserved`) set differently.
    fn env(&self, reserved: &BTreeMap<String, String>) -> Result<BTreeMap<String, String>, String> {
        let mut env: BTreeMap<String, (String, &str)> = BTreeMap::new();
        for (r, _, _) in &self.refs {
            for (k, v) in r.env.iter().chain(r.secret_env.iter()) {
                if reserved.contains_key(k) {
                    return Err(format!("service {:?} sets the reserved variable {k}", r.name));
                }
                match env.get(k) {
                    Some((old, by)) if old != v => {
                        return Err(format!("services {by:?} and {:?} set {k} differently", r.name));
                    }
                    Some(_) => {}
                    None => {
                        env.insert(k.clone(), (v.clone(), r.name.as_str()));
                    }
                }
            }
        }
        Ok(env.into_iter().map(|(k, (v, _))| (k, v)).collect())
    }

    /// What the services add to every driver request: their environment and MCP servers, checked
    /// against the descriptor together with the declared MCP set and the hosted tools (declaration and
    /// token environment), whose names and variables a service may not reuse.
    pub(crate) fn publish(
        &self,
        desc: &Descriptor,
        declared: &[McpServer],
        hosted: Option<&(McpServer, BTreeMap<String, String>)>,
    ) -> Result<Published, StartError> {
        let refused = |code: String, message: String| StartError {
            code,
            message: format!("a service's publication was refused: {message}"),
        };
        let reserved = hosted.map(|h| h.1.clone()).unwrap_or_default();
        let env = self
            .env(&reserved)
            .map_err(|m| refused("service_env_conflict".into(), m))?;
        let mcp: Vec<McpServer> = self.refs.iter().filter_map(|(r, _, _)| r.mcp.clone()).collect();
        for m in &mcp {
            if let McpTransport::Http {
                bearer_token_env: Some(v),
                ..
            }
            | McpTransport::Sse {
                bearer_token_env: Some(v),
                ..
            } = &m.transport
                && reserved.contains_key(v)
            {
                let e = ConfigError::InvalidMcpConfig(format!(
                    "service MCP server {:?} names the host tools' token variable",
                    m.name
                ));
                return Err(refused(Error::from(e.clone()).code(), e.to_string()));
            }
        }
        let all: Vec<McpServer> = declared
            .iter()
            .chain(&mcp)
            .chain(hosted.map(|h| &h.0))
            .cloned()
            .collect();
        check_mcp(desc, &all).map_err(|e| refused(Error::from(e.clone()).code(), e.to_string()))?;
        Ok(Published { env, mcp })
    }

    /// Ends the event sources: cancels their token and waits (bounded) for them to flush and close.
    /// A source that does not close in time is aborted and reported.
    pub(crate) async fn flush_sources(&mut self) -> Vec<String> {
        self.source_cancel.cancel();
        let mut errors = Vec::new();
        let deadline = tokio::time::Instant::now() + self.plan.bound;
        for mut task in self.sources.drain(..) {
            match tokio::time::timeout_at(deadline, &mut task).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => errors.push(format!("a run service event source failed: {e}")),
                Err(_) => {
                    task.abort();
                    errors.push(format!(
                        "a run service event source did not close within {:?} of cancellation",
                        self.plan.bound
                    ));
                }
            }
        }
        errors
    }

    /// The attachments' subagent results (each results function called once).
    pub(crate) fn collect_results(&mut self) -> Vec<SubagentResult> {
        self.results.drain(..).flat_map(|f| f()).collect()
    }

    /// Releases the manager's services and detaches every attached provider, concurrently, each
    /// bounded by the plan's bound. Returns the final service reports and the errors.
    pub(crate) async fn cleanup(mut self) -> (Vec<ServiceReport>, Vec<String>) {
        let mut errors = self.flush_sources().await;
        let bound = self.plan.bound;
        let bounded =
            |what: String, f: futures::future::BoxFuture<'static, Result<(), super::ServiceError>>| async move {
                match tokio::time::timeout(bound, f).await {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some(format!("{what} failed: {e}")),
                    Err(_) => Some(format!("{what} did not finish within {bound:?}")),
                }
            };
        let release = match (&self.plan.manager, self.ensured) {
            (Some(m), true) => {
                let (m, id) = (m.clone(), self.run_id.clone());
                Some(bounded(
                    "releasing services".into(),
                    Box::pin(async move { m.release_by_run(&id).await }),
                ))
            }
            _ => None,
        };
        let detaches = self.attached.iter().map(|p| {
            let (p, id) = (p.clone(), self.run_id.clone());
            bounded(
                format!("detaching run service {}", p.name()),
                Box::pin(async move { p.detach_run(&id).await }),
            )
        });
        let (released, detached) = tokio::join!(
            async move {
                match release {
                    Some(f) => f.await,
                    None => None,
                }
            },
            futures::future::join_all(detaches)
        );
        let reports = self
            .refs
            .iter()
            .map(|(r, origin, index)| {
                let failure = match origin {
                    ServiceOrigin::Manager => released.clone(),
                    ServiceOrigin::Run => detached.get(*index).cloned().flatten(),
                };
                let mut report = ServiceReport::of(r, *origin);
                report.state = if failure.is_some() {
                    "release_failed"
                } else {
                    "released"
                }
                .into();
                report.error = failure;
                report
            })
            .collect();
        errors.extend(released);
        errors.extend(detached.into_iter().flatten());
        (reports, errors)
    }
}
