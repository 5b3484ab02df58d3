//! `agent-adaptor acp --url`: the stdio edge an editor launches, backed by a running service over
//! `/v1/agents/{agent}/acp`. The built binary bridges stdin/stdout to an in-process keyed `serve`:
//! a streamed prompt, a permission request answered through the bridge, a cancel, the key's tenant
//! owning the session, a refused key answered as a JSON-RPC error, and the connection ended (its
//! prompt cancelled) when stdin closes.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Client, agent_text, prompt, prompt_with_permission, updates};
use crate::server::start_with;
use crate::server::tenancy::{KEY_A, keyed};

#[tokio::test(flavor = "multi_thread")]
async fn acp_url_bridges_an_editor_to_a_running_service() {
    let server = start_with(keyed()).await;
    let url = server.url();
    let mut c = Client::spawn(&["--url", &url, "--api-key", KEY_A]);
    let session = c.new_session().await;

    let frames = c.call(3, "session/prompt", prompt(&session, "hello there")).await;
    assert!(
        updates(&frames, "agent_message_chunk").len() > 1,
        "chunks stream through the bridge"
    );
    assert_eq!(agent_text(&frames), "Reference reply: hello there");
    assert_eq!(frames.last().unwrap()["result"]["stopReason"], "end_turn");

    // The permission request comes from the service's session stream; the answer goes back in a POST.
    let (request, frames) = prompt_with_permission(&mut c, &session, "allow").await;
    assert_eq!(request["params"]["toolCall"]["title"], "write_file notes.txt");
    assert_eq!(frames.last().unwrap()["result"]["stopReason"], "end_turn");

    // session/cancel goes through too.
    c.send(json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
        "params": prompt(&session, &format!("slow {}", "word ".repeat(60)))}))
        .await;
    loop {
        let f = c.next().await;
        if f["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
    }
    c.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}))
        .await;
    assert_eq!(
        c.until_response(4).await.last().unwrap()["result"]["stopReason"],
        "cancelled"
    );

    // The session is tenant a's, in the service's store.
    let listed = c.call(5, "session/list", json!({})).await;
    assert_eq!(
        listed.last().unwrap()["result"]["sessions"][0]["sessionId"],
        session.as_str()
    );
    assert_eq!(
        server.state().acp.len(),
        1,
        "one connection while the editor is attached"
    );

    // A slow prompt is running when the editor goes away: the bridge ends the connection.
    c.send(json!({"jsonrpc": "2.0", "id": 6, "method": "session/prompt",
        "params": prompt(&session, &format!("slow {}", "word ".repeat(200)))}))
        .await;
    c.next().await;
    let Client {
        _child: mut child,
        stdin,
        lines,
    } = c;
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .expect("the bridge exits when stdin closes")
        .unwrap();
    assert!(status.success(), "{status}");
    drop(lines);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while !server.state().acp.is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the connection ends when stdin closes"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_url_answers_a_refused_key_as_a_json_rpc_error() {
    let server = start_with(keyed()).await;
    let url = server.url();
    let mut c = Client::spawn(&["--url", &url, "--api-key", "not-a-key"]);
    let answer: Value = c
        .call(1, "initialize", json!({"protocolVersion": 1}))
        .await
        .pop()
        .unwrap();
    assert_eq!(answer["error"]["data"]["status"], 401, "{answer}");
    assert_eq!(answer["error"]["data"]["body"]["error"]["code"], "unauthorized");
    // Nothing else is sent before a connection exists.
    let refused = c.call(2, "session/list", json!({})).await.pop().unwrap();
    assert_eq!(
        refused["error"]["message"],
        "the first message must be initialize"
    );
    server.shutdown().await.unwrap();
}
