//! Fuzz target for `RunAgentInput` (`agui::input`): a full AG-UI request (history with a decision tool
//! call and its tool result, frontend tools, forwarded props, `resume[]`, protocol version) mutated at
//! random paths, parsed, and every accessor the AG-UI route uses called on it. Nothing may panic; a
//! body that does not parse is a serde error with a message, and a bad `approvals` mode is an error.

use agent_adaptor::agui::input::{RunAgentInput, thread_key};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::{Damage, Mutation, damage, fuzz, mutate, mutations, vocabulary};

#[test]
fn fuzz_run_agent_input_parse_and_accessors() {
    let sample = json!({
        "threadId": "t-1", "runId": "r-1",
        "messages": [
            {"id": "u1", "role": "user", "content": "hello"},
            {"id": "u2", "role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image", "source": {}}]},
            {"id": "a1", "role": "assistant", "content": null,
             "toolCalls": [{"id": "dec-1", "type": "function", "function": {"name": "dec.permission", "arguments": "{}"}}]},
            {"id": "t1", "role": "tool", "content": "{\"decision\":\"approve\"}", "toolCallId": "dec-1"}
        ],
        "tools": [{"name": "confirm", "description": "d", "parameters": {"type": "object"}}],
        "context": [{"description": "c", "value": "v"}],
        "state": {"k": 1},
        "forwardedProps": {"approvals": "interrupt"},
        "resume": [{"interruptId": "int-1", "status": "resolved", "payload": {"decision": "approve"}}],
        "protocolVersion": "1.0"
    });
    let mut vocab = vocabulary([&sample]);
    vocab.extend(
        [
            "stream",
            "tool",
            "cancelled",
            "system",
            "developer",
            "reasoning",
            "activity",
            "0.0.59",
            "2.0",
        ]
        .map(String::from),
    );
    let strategy = (mutations(&vocab), damage());
    fuzz(
        "RunAgentInput",
        strategy,
        |(muts, dmg): (Vec<Mutation>, Option<Damage>)| {
            let doc = mutate(sample.clone(), &muts);
            let bytes = super::mutate_line(&serde_json::to_string(&doc).unwrap(), &[], &dmg);
            let input: RunAgentInput = match serde_json::from_slice(&bytes) {
                Ok(i) => i,
                Err(e) => {
                    prop_assert!(!e.to_string().is_empty());
                    return Ok(());
                }
            };
            let _ = (input.prompt(), input.tool_result(), input.trailing_tool_results());
            let _ = (input.last_user_id(), thread_key(&input.thread_id));
            if let Err(e) = input.approval_mode() {
                prop_assert!(!e.is_empty());
            }
            for m in &input.messages {
                let _ = m.text();
            }
            let round: Value = serde_json::to_value(&input).unwrap();
            prop_assert_eq!(serde_json::from_value::<RunAgentInput>(round).unwrap(), input);
            Ok(())
        },
    );
}
