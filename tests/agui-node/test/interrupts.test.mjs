// AG-UI interrupts and resume with both real clients: an approval ends the AG-UI run with
// `outcome: interrupt` while the execution stays parked in the service; the next run on the thread
// carries `resume[]` and streams the rest of the same execution (decision result, gated tool, reply).
// The 1.0 client gets interrupts by default (it sends `protocolVersion`); CopilotKit's 0.0.59 keeps
// the tool-call path by default and opts in with `forwardedProps.approvals = "interrupt"`.
import assert from "node:assert/strict";
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

const OPT_IN = { "@ag-ui/client@0.0.59": { approvals: "interrupt" } };

/** Runs until the interrupt; returns the run and its one interrupt. */
async function untilInterrupt(client, agent) {
  const r = await run(agent, { forwardedProps: OPT_IN[client.name] ?? {} });
  assertClean(r);
  const end = r.events.at(-1);
  assert.equal(end.outcome?.type, "interrupt", `outcome: ${JSON.stringify(end)}`);
  assert.equal(end.outcome.interrupts.length, 1);
  const interrupt = end.outcome.interrupts[0];
  assert.equal(agent.pendingInterrupts.length, 1, "the client holds the pending interrupt");
  assert.equal(agent.pendingInterrupts[0].id, interrupt.id);
  assert.ok(
    r.events.some((e) => e.type === "TOOL_CALL_START" && e.toolCallId === interrupt.toolCallId),
    "the interrupt names the decision tool call the run showed",
  );
  return { r, interrupt };
}

async function getRun(runId) {
  const res = await fetch(`${service.url}/v1/runs/${encodeURIComponent(runId)}`);
  assert.equal(res.status, 200);
  return res.json();
}

async function finished(runId) {
  for (let i = 0; i < 200; i++) {
    const body = await getRun(runId);
    if (!["running", "parked"].includes(body.state)) return body;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} did not finish`);
}

for (const client of CLIENTS) {
  describe(`interrupts and resume (${client.name})`, () => {
    it("a question interrupts the run; resume answers it and the same execution continues", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "a question for you");
      const { interrupt } = await untilInterrupt(client, agent);
      assert.equal(interrupt.reason, "input_required");
      assert.deepEqual(
        interrupt.metadata.choices.map((c) => c.key),
        ["red", "green", "blue"],
      );
      const execution = interrupt.metadata.run_id;
      assert.equal((await getRun(execution)).state, "parked", "parked, not finished");

      // The client itself refuses a run that ignores the pending interrupt.
      const ignored = await run(agent, { forwardedProps: OPT_IN[client.name] ?? {} });
      assert.match(String(ignored.error), /pending interrupt/);

      const resume = [{ interruptId: interrupt.id, status: "resolved", payload: { answer: "green" } }];
      const r = await run(agent, { resume, forwardedProps: OPT_IN[client.name] ?? {} });
      assertClean(r);
      assert.equal(r.events.at(-1).outcome?.type ?? "success", "success");
      assert.ok(!r.events.some((e) => e.type === "TOOL_CALL_START" && e.toolCallId === interrupt.toolCallId), "not re-emitted");
      const result = r.events.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === interrupt.toolCallId);
      assert.ok(result, "the decision tool call gets its result in the resumed run");
      assert.match(result.content, /green/);
      assert.match(text(r), /Reference reply: a question for you/);
      assert.equal(agent.pendingInterrupts.length, 0);

      const done = await finished(execution);
      assert.equal(done.state, "succeeded");
      assert.match(done.result.text, /\[answer: green\]/);
    });

    it("an approved permission interrupt runs the gated tool; a cancelled one denies it", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "permission to write the notes");
      const { interrupt } = await untilInterrupt(client, agent);
      assert.equal(interrupt.reason, "tool_call");
      assert.deepEqual(interrupt.responseSchema.required, ["approved"]);
      const r = await run(agent, {
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
        forwardedProps: OPT_IN[client.name] ?? {},
      });
      assertClean(r);
      const write = r.events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "write_file");
      assert.ok(write, "the approved tool ran");
      const written = r.events.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === write.toolCallId);
      assert.equal(written.content, "wrote 5 bytes to notes.txt");

      const other = newAgent(client, service.url);
      say(other, "permission to write, then cancel it");
      const second = await untilInterrupt(client, other);
      const denied = await run(other, {
        resume: [{ interruptId: second.interrupt.id, status: "cancelled" }],
        forwardedProps: OPT_IN[client.name] ?? {},
      });
      assertClean(denied, "RUN_ERROR");
      assert.ok(!denied.events.some((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "write_file"), "a denied tool never runs");
    });
  });
}
