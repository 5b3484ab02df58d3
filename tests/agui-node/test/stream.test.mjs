// Text, tool calls, reasoning and errors from the built-in `reference` agent, through both real
// clients: the event sequence the verifier accepts, and what the client makes of it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { CLIENTS } from "../lib/clients.mjs";
import { startService } from "../lib/server.mjs";
import { assertClean, assertInOrder, newAgent, run, say, text, types } from "../lib/run.mjs";

let service;
before(async () => {
  service = await startService();
});
after(async () => {
  await service?.stop();
});

for (const client of CLIENTS) {
  describe(`stream (${client.name})`, () => {
    it("streams text: one assistant message with the reply, closed before RUN_FINISHED", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "hello there");
      const r = await run(agent);
      assertClean(r);
      assertInOrder(r, ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]);
      assert.match(text(r), /Reference reply: hello there/);
      const started = r.events[0];
      assert.equal(started.threadId, agent.threadId);
      const finished = r.events.at(-1);
      assert.equal(finished.threadId, agent.threadId);
      assert.equal(finished.outcome, undefined, "a plain run has no outcome (or success)");
      const reply = agent.messages.filter((m) => m.role === "assistant" && /Reference reply/.test(m.content ?? ""));
      assert.equal(reply.length, 1, JSON.stringify(agent.messages));
    });

    it("streams a backend tool call with its string result, owned by no open text", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "echo this");
      const r = await run(agent);
      assertClean(r);
      assertInOrder(r, ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]);
      const start = r.events.find((e) => e.type === "TOOL_CALL_START");
      assert.equal(start.toolCallName, "echo");
      const args = r.events.filter((e) => e.type === "TOOL_CALL_ARGS" && e.toolCallId === start.toolCallId);
      assert.deepEqual(JSON.parse(args.map((e) => e.delta).join("")), { text: "echo this" });
      const result = r.events.find((e) => e.type === "TOOL_CALL_RESULT");
      assert.equal(result.toolCallId, start.toolCallId);
      assert.equal(typeof result.content, "string");
      assert.equal(result.content, "echo this");
      const toolMsg = agent.messages.find((m) => m.role === "tool" && m.toolCallId === start.toolCallId);
      assert.ok(toolMsg, `tool message in ${JSON.stringify(agent.messages)}`);
    });

    it("streams reasoning as a `reasoning` message, closed before the answer ends the run", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "think about it");
      const r = await run(agent);
      assertClean(r);
      assertInOrder(r, ["REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "RUN_FINISHED"]);
      const start = r.events.find((e) => e.type === "REASONING_MESSAGE_START");
      assert.equal(start.role, "reasoning");
      const thought = r.events
        .filter((e) => e.type === "REASONING_MESSAGE_CONTENT")
        .map((e) => e.delta)
        .join("");
      assert.match(thought, /Considering: think about it/);
    });

    it("reports a failing agent as exactly one RUN_ERROR with the failure reason as code", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "please fail now");
      const r = await run(agent);
      assertClean(r, "RUN_ERROR");
      const err = r.events.at(-1);
      assert.equal(typeof err.message, "string");
      assert.match(err.message, /reference failure requested/);
      assert.equal(typeof err.code, "string");
      assert.ok(err.code.length > 0);
    });

    it("gives every text segment a fresh message id (no id reopened after END)", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "segments please");
      const r = await run(agent);
      assertClean(r);
      const ended = new Set();
      for (const e of r.events) {
        if (e.type === "TEXT_MESSAGE_START") assert.ok(!ended.has(e.messageId), `reopened ${e.messageId}: ${types(r)}`);
        if (e.type === "TEXT_MESSAGE_END") ended.add(e.messageId);
      }
    });
  });
}
