//! Every operation's generator-facing names, in one table: a unique, namespaced `operationId`
//! (`<tag>_<verb>`, so generated clients get `threads.get` and `standby.get` rather than two `get`s), a plain
//! summary (no markdown: documentation UIs show it as a title) and a description. A test checks that the
//! table names every operation the router serves and nothing else.

use utoipa::openapi::path::Operation;

/// `(method, path, operationId, summary, description)` of every documented operation.
pub const OPERATIONS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "get",
        "/",
        "playground_page",
        "The console page",
        "A zero-build run-history console: threads by recency, a thread's runs, a run as a conversation (messages, \
      reasoning, tool cards, approvals with their outcomes, errors) with its raw events; starts runs and answers \
      approvals. Its scripts and stylesheet are under /console/.",
    ),
    (
        "get",
        "/healthz",
        "health_live",
        "Liveness",
        "Answers 200 while the process serves requests.",
    ),
    (
        "get",
        "/readyz",
        "health_ready",
        "Readiness",
        "Answers 200 when the store answers, 503 otherwise (and while shutting down).",
    ),
    (
        "get",
        "/metrics",
        "health_metrics",
        "Prometheus metrics",
        "Service-wide counters and gauges in the Prometheus text format; no tenant names, ids or keys.",
    ),
    (
        "get",
        "/v1/agents",
        "agents_list",
        "List agents",
        "The configured agents with their providers and capability descriptors.",
    ),
    (
        "get",
        "/v1/agents/{agent}",
        "agents_get",
        "Get an agent",
        "One agent: its provider, capability descriptor and the names of its resources (never URLs or paths).",
    ),
    (
        "get",
        "/v1/agents/{agent}/inspect",
        "agents_inspect",
        "Inspect an agent",
        "Runs the agent's probes (environment, models, quota, config schema, skills, profile) concurrently, each \
      under the timeout; a probe that does not answer is null and listed in errors.",
    ),
    (
        "post",
        "/v1/agents/{agent}/agui",
        "agui_run",
        "Run an agent over AG-UI",
        "Takes a RunAgentInput and streams AG-UI events (text/event-stream) for one run on the input's thread.",
    ),
    (
        "post",
        "/v1/agui",
        "agui_run_default",
        "Run the default agent over AG-UI",
        "As agui_run, for the first configured agent.",
    ),
    (
        "post",
        "/v1/agents/{agent}/acp",
        "acp_post",
        "Send an ACP message",
        "ACP over Streamable HTTP: the initialize request opens a connection (its answer carries Acp-Connection-Id); \
      later messages name it and are answered 202, their responses coming on the session's or the connection's stream.",
    ),
    (
        "post",
        "/v1/acp",
        "acp_post_default",
        "Send an ACP message to the default agent",
        "As acp_post, for the first configured agent.",
    ),
    (
        "get",
        "/v1/agents/{agent}/acp",
        "acp_stream",
        "Follow an ACP stream",
        "The connection's stream, or with Acp-Session-Id a session's: JSON-RPC messages over SSE, each with an id; \
      Last-Event-ID resumes with nothing missed while the stream still holds it.",
    ),
    (
        "get",
        "/v1/acp",
        "acp_stream_default",
        "Follow an ACP stream of the default agent",
        "As acp_stream, for the first configured agent.",
    ),
    (
        "delete",
        "/v1/agents/{agent}/acp",
        "acp_close",
        "End an ACP connection",
        "Ends the connection named by Acp-Connection-Id: its running prompts are cancelled and its streams end.",
    ),
    (
        "delete",
        "/v1/acp",
        "acp_close_default",
        "End an ACP connection of the default agent",
        "As acp_close, for the first configured agent.",
    ),
    (
        "post",
        "/v1/agents/{agent}/runs",
        "runs_start",
        "Start a stateless run",
        "Starts a run with no thread; its events are kept and replayable like any run's.",
    ),
    (
        "post",
        "/v1/agents/{agent}/threads/{key}/runs",
        "runs_start_on_thread",
        "Start a run on a thread",
        "Starts a run on the thread (continuing its conversation when its checkpoint allows); 409 thread_busy \
      while another run or a Standby holds the thread.",
    ),
    (
        "get",
        "/v1/runs/{run_id}",
        "runs_get",
        "Get a run",
        "The run's state and, once finished, its result or error.",
    ),
    (
        "post",
        "/v1/runs/{run_id}/cancel",
        "runs_cancel",
        "Cancel a run",
        "Requests cancellation (202); the run ends cancelled and its events end with done.",
    ),
    (
        "get",
        "/v1/runs/{run_id}/events",
        "runs_events",
        "Follow a run's events",
        "Server-sent events with replay: id is the run's sequence, Last-Event-ID or ?after= resumes with no gap \
      and no duplicate; the stream ends after done.",
    ),
    (
        "post",
        "/v1/runs/{run_id}/messages",
        "runs_send_message",
        "Send a supplemental message",
        "Admits a message for the running run (202: admitted, not yet delivered); its delivery is reported as \
      message_update events.",
    ),
    (
        "get",
        "/v1/runs/{run_id}/approvals",
        "approvals_list",
        "List a run's approvals",
        "Every approval request of the run with its state; ?pending=true for the open ones only.",
    ),
    (
        "post",
        "/v1/runs/{run_id}/approvals/{id}",
        "approvals_decide",
        "Answer an approval",
        "Approves, denies or answers a request exactly once: 409 when already resolved, 410 when expired, 422 \
      for the wrong kind of answer.",
    ),
    (
        "get",
        "/v1/runs",
        "runs_list",
        "List runs",
        "The caller's runs, newest first, filtered by state and agent and paged by an opaque cursor; an operator \
      key lists every tenant's runs.",
    ),
    (
        "get",
        "/v1/agents/{agent}/threads/{key}/runs",
        "runs_list_thread",
        "List a thread's runs",
        "The runs of one thread, newest first, filtered by state and paged by an opaque cursor.",
    ),
    (
        "get",
        "/v1/usage",
        "usage_list",
        "Metered usage",
        "Tokens, estimated cost, CLI wall and CPU time per tenant, agent and thread over a time range, \
      cursor-paged; an operator key reads every tenant's usage.",
    ),
    (
        "get",
        "/v1/agents/{agent}/threads",
        "threads_list",
        "List threads",
        "The tenant's threads of this agent, paged by cursor.",
    ),
    (
        "post",
        "/v1/agents/{agent}/threads",
        "threads_create",
        "Declare a thread",
        "Declares a thread with run defaults; idempotent by key (same defaults 200, other defaults 409).",
    ),
    (
        "get",
        "/v1/agents/{agent}/threads/{key}",
        "threads_get",
        "Get a thread",
        "The thread's status, checkpoint audit, defaults and active run.",
    ),
    (
        "post",
        "/v1/agents/{agent}/threads/{key}/archive",
        "threads_archive",
        "Archive a thread",
        "Archives the thread: it leaves the listing, its record stays for audit.",
    ),
    (
        "get",
        "/v1/agents/{agent}/threads/{key}/events",
        "threads_history",
        "A thread's history",
        "Every recorded event of the thread's runs, in order, paged by cursor.",
    ),
    (
        "post",
        "/v1/agents/{agent}/threads/{key}/fork",
        "threads_fork",
        "Fork a thread",
        "Declares a new thread whose first run starts from this thread's checkpoint.",
    ),
    (
        "post",
        "/v1/agents/{agent}/threads/{key}/standby",
        "standby_open",
        "Open a Standby",
        "Opens (201) or returns (200) the thread's Standby: a server-lifetime conversation that owns the thread.",
    ),
    (
        "get",
        "/v1/agents/{agent}/threads/{key}/standby",
        "standby_get",
        "Get a Standby",
        "The thread's live Standby.",
    ),
    (
        "delete",
        "/v1/agents/{agent}/threads/{key}/standby",
        "standby_release",
        "Release a Standby",
        "Ends the Standby and releases its thread.",
    ),
    (
        "post",
        "/v1/agents/{agent}/threads/{key}/standby/messages",
        "standby_send",
        "Send to a Standby",
        "Admits input for the Standby (202: admitted, not delivery); it joins the running execution or starts the \
      next.",
    ),
    (
        "post",
        "/v1/agents/{agent}/threads/{key}/standby/cancel",
        "standby_cancel",
        "Cancel a Standby's work",
        "Cancels the running execution and fails queued input as cancelled; the Standby stays open.",
    ),
    (
        "get",
        "/v1/agents/{agent}/threads/{key}/standby/events",
        "standby_events",
        "Follow a Standby's events",
        "Server-sent events of the Standby's executions, with replay by Last-Event-ID.",
    ),
    (
        "post",
        "/v1/webhooks",
        "webhooks_create",
        "Create a webhook",
        "Subscribes a URL to the tenant's events (run.finished, run.failed, approval.requested, message.failed). \
      The answer carries the signing secret, shown only this once: every delivery is signed per the Standard \
      Webhooks specification (webhook-id, webhook-timestamp, webhook-signature headers; docs/webhooks.md).",
    ),
    (
        "get",
        "/v1/webhooks",
        "webhooks_list",
        "List webhooks",
        "The tenant's subscriptions, oldest first, without their secrets; an operator key lists every tenant's.",
    ),
    (
        "get",
        "/v1/webhooks/{id}",
        "webhooks_get",
        "Get a webhook",
        "One subscription without its secret; another tenant's is 404.",
    ),
    (
        "delete",
        "/v1/webhooks/{id}",
        "webhooks_delete",
        "Delete a webhook",
        "Deletes the subscription with its pending deliveries and its delivery log.",
    ),
    (
        "get",
        "/v1/webhooks/{id}/deliveries",
        "webhooks_deliveries",
        "List a webhook's deliveries",
        "The newest deliveries, each with its state (pending, delivered, failed), its attempts (HTTP status or \
      error, duration) and when the next retry is due. A failed attempt is retried with exponential backoff \
      and jitter until the configured number of attempts.",
    ),
    (
        "post",
        "/v1/webhooks/{id}/deliveries/{delivery}/retry",
        "webhooks_retry",
        "Retry a delivery",
        "Makes a delivered or failed delivery due now; it keeps its attempt count, so one that used every \
      attempt gets one more. A pending delivery is left as it is.",
    ),
];

/// Applies [`OPERATIONS`] to the document: ids, summaries and descriptions by (method, path).
pub(super) struct Names;

impl utoipa::Modify for Names {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        for (path, item) in doc.paths.paths.iter_mut() {
            let ops: [(&str, &mut Option<Operation>); 5] = [
                ("get", &mut item.get),
                ("post", &mut item.post),
                ("put", &mut item.put),
                ("delete", &mut item.delete),
                ("patch", &mut item.patch),
            ];
            for (name, op) in ops {
                let Some(op) = op else { continue };
                super::examples::add(name, path, op);
                if let Some((_, _, id, summary, description)) =
                    OPERATIONS.iter().find(|(m, p, ..)| *m == name && p == path)
                {
                    op.operation_id = Some((*id).to_owned());
                    op.summary = Some((*summary).to_owned());
                    op.description = Some((*description).to_owned());
                }
            }
        }
    }
}
