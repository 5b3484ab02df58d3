// Frontend tool round trip: the client runs a tool of its own and sends the result as a `tool`
// message; the next run on the same thread continues from that result (no fabricated
// TOOL_CALL_RESULT from the service). (The content avoids the words the reference agent reacts to.)
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
  });
}
