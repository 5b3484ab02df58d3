//! A small JSON-RPC client over [`AppServer`] that writes every frame with the wire constructors
//! of `providers::codex::wire::client`, so the recorded stdin is exactly what the driver sends.

use agent_adaptor::providers::codex::wire::RequestId;
use agent_adaptor::providers::codex::wire::client::{
    self, ApprovalPolicy, ClientInfo, ClientRequest, InitializeCapabilities, InitializeParams, SandboxMode,
    ThreadStartParams, TurnStartParams,
};
use agent_adaptor::providers::codex::wire::items::UserInput;
use serde::Serialize;
use serde_json::Value;

use super::harness::{AppServer, Lab, Session};

/// The client name sent in `initialize` (becomes the `originator` header).
pub const CLIENT_NAME: &str = "agent-adaptor-lab";

pub struct Rpc {
    pub srv: AppServer,
    next_id: i64,
}

impl Rpc {
    /// Spawns app-server and performs `initialize` + `initialized`.
    pub async fn start(lab: &Lab, experimental: bool) -> Rpc {
        let mut rpc = Rpc {
            srv: lab.app_server(),
            next_id: 1,
        };
        let init = ClientRequest::Initialize(InitializeParams {
            client_info: ClientInfo {
                name: CLIENT_NAME.into(),
                title: None,
                version: "0.0.1".into(),
            },
            capabilities: Some(InitializeCapabilities {
                experimental_api: experimental,
                ..Default::default()
            }),
        });
        let resp = rpc.call(init).await;
        assert!(
            resp["result"]["userAgent"]
                .as_str()
                .unwrap()
                .starts_with(CLIENT_NAME),
            "{resp}"
        );
        rpc.srv.send_line(&client::initialized()).await;
        rpc
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send(&mut self, req: ClientRequest) -> RequestId {
        let id = RequestId::Int(self.next_id);
        self.next_id += 1;
        self.srv.send_line(&req.to_line(&id)).await;
        id
    }

    /// Sends a request and waits for its response (result or error), returned whole.
    pub async fn call(&mut self, req: ClientRequest) -> Value {
        let id = self.send(req).await;
        self.response(&id).await
    }

    /// Waits for the response to `id`.
    pub async fn response(&self, id: &RequestId) -> Value {
        self.srv.wait_response(&serde_json::to_value(id).unwrap()).await
    }

    /// `thread/start` in the lab's cwd with this policy and sandbox; returns the thread id.
    pub async fn thread_start(
        &mut self,
        lab: &Lab,
        approval: ApprovalPolicy,
        sandbox: SandboxMode,
    ) -> String {
        let resp = self
            .call(ClientRequest::ThreadStart(ThreadStartParams {
                cwd: Some(lab.env.cwd.display().to_string()),
                approval_policy: Some(approval),
                sandbox: Some(sandbox),
                ..Default::default()
            }))
            .await;
        resp["result"]["thread"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("thread/start failed: {resp}"))
            .to_owned()
    }

    /// `turn/start` with one text input; returns the turn id.
    pub async fn turn_start(&mut self, thread: &str, text: &str) -> String {
        self.turn_start_with(TurnStartParams {
            thread_id: thread.into(),
            input: vec![UserInput::text(text)],
            ..Default::default()
        })
        .await
    }

    /// `turn/start` with full params; returns the turn id.
    pub async fn turn_start_with(&mut self, params: TurnStartParams) -> String {
        let resp = self.call(ClientRequest::TurnStart(params)).await;
        resp["result"]["turn"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("turn/start failed: {resp}"))
            .to_owned()
    }

    /// Waits for `turn/completed` of `turn` and returns its params.
    pub async fn turn_completed(&self, turn: &str) -> Value {
        let t = turn.to_owned();
        self.srv
            .wait_from(0, &format!("turn/completed {turn}"), move |v| {
                v["method"] == "turn/completed" && v["params"]["turn"]["id"] == t.as_str()
            })
            .await
            .1["params"]
            .clone()
    }

    /// Answers a server request.
    pub async fn answer<R: Serialize>(&mut self, request: &Value, result: &R) {
        let id: RequestId = serde_json::from_value(request["id"].clone()).unwrap();
        self.srv.send_line(&client::response(&id, result)).await;
    }

    /// Closes stdin and collects the transcript.
    pub async fn close(self) -> Session {
        self.srv.close().await
    }
}

/// `item/<phase>` notifications whose item has this type, in order.
pub fn items_of(session: &Session, phase: &str, item_type: &str) -> Vec<Value> {
    session
        .values()
        .into_iter()
        .filter(|v| {
            v["method"] == format!("item/{phase}").as_str() && v["params"]["item"]["type"] == item_type
        })
        .map(|v| v["params"]["item"].clone())
        .collect()
}
