// Frontend tool round trip: the client runs a tool of its own and sends the result as a `tool`
// message; the next run on the same thread continues from that result (no fabricated
// TOOL_CALL_RESULT from the service). (The content avoids the words the reference agent reacts to.)
// And the service's own decision tool calls as frontend tools (`forwardedProps.approvals = "tool"`):
// the run ends leaving `dec.<kind>` to the client, whose tool message continues the same execution
// as that tool call — not as a new user turn.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { CLIENTS } from "../lib/clients.mjs";
import { startService } from "../lib/server.mjs";
import { assertClean, newAgent, run, say, text } from "../lib/run.mjs";

let service;
before(async () => {
  service = await startService();
});
after(async () => {
  await service?.stop();
});

const confirmAction = {
  name: "confirmAction",
  description: "Ask the user to confirm an action",
  parameters: { type: "object", properties: { action: { type: "string" } }, required: ["action"] },
};

for (const client of CLIENTS) {
  describe(`frontend tool (${client.name})`, () => {
    it("a tool message continues the thread from the frontend tool's result", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "hello");
      const first = await run(agent, { tools: [confirmAction] });
      assertClean(first);

      const callId = `fe-${randomUUID()}`;
      agent.addMessage({
        id: `a-${randomUUID()}`,
        role: "assistant",
        toolCalls: [{ id: callId, type: "function", function: { name: "confirmAction", arguments: '{"action":"deploy"}' } }],
      });
      agent.addMessage({ id: `t-${randomUUID()}`, role: "tool", toolCallId: callId, content: '{"confirmed":"yes"}' });
      const second = await run(agent, { tools: [confirmAction] });
      assertClean(second);
      assert.ok(
        !second.events.some((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === callId),
        "the service must not fabricate a result for the frontend tool",
      );
      assert.match(text(second), new RegExp(`${callId}.*confirmed`));
    });

    it("a tool message for a decision tool call continues the same execution", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "permission to write the notes");
      const props = { forwardedProps: { approvals: "tool" } };
      const first = await run(agent, props);
      assertClean(first);
      assert.equal(first.events.at(-1).outcome, undefined, "a plain RUN_FINISHED");
      const dec = first.events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "dec.permission");
      assert.ok(dec, "the decision is a tool call for the client");
      assert.ok(!first.events.some((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === dec.toolCallId));
      const args = JSON.parse(
        first.events.filter((e) => e.type === "TOOL_CALL_ARGS" && e.toolCallId === dec.toolCallId).map((e) => e.delta).join(""),
      );
      // The client's history holds the call (from the events); it adds its result.
      assert.ok(agent.messages.some((m) => m.toolCalls?.some((c) => c.id === dec.toolCallId)));
      agent.addMessage({ id: `t-${randomUUID()}`, role: "tool", toolCallId: dec.toolCallId, content: '{"approved":true}' });
      const second = await run(agent, props);
      assertClean(second);
      assert.ok(!second.events.some((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === dec.toolCallId), "not echoed");
      const write = second.events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "write_file");
      assert.ok(write, "the approved tool ran in the same execution");
      let body;
      for (let i = 0; i < 200; i++) {
        body = await (await fetch(`${service.url}/v1/runs/${encodeURIComponent(args.run_id)}`)).json();
        if (!["running", "parked"].includes(body.state)) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(body.state, "succeeded", JSON.stringify(body));
      assert.match(body.result?.text ?? "", /\[permission approved\]/, JSON.stringify(body));
    });
  });
}
