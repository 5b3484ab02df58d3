// Approvals over POST while the AG-UI stream is open: the service shows a pending approval as a
// `dec.<kind>` tool call whose arguments name the run and the request; the client answers it with
// `POST /v1/runs/{run_id}/approvals/{id}` and the same stream continues with the result.
// (`forwardedProps.approvals = "stream"`; interrupts and resume are in interrupts.test.mjs.)
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { CLIENTS } from "../lib/clients.mjs";
import { startService } from "../lib/server.mjs";
import { assertClean, assertInOrder, newAgent, run, say } from "../lib/run.mjs";

let service;
before(async () => {
  service = await startService();
});
after(async () => {
  await service?.stop();
});

async function post(path, body) {
  const res = await fetch(service.url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** Runs `prompt`, answering each `dec.*` tool call with `answer(args)` once its arguments are complete. */
async function runAnswering(agent, answer) {
  const args = new Map();
  const names = new Map();
  const posts = [];
  // The stream mode (the default without protocolVersion; the 1.0 client would get interrupts).
  const r = await run(agent, { forwardedProps: { approvals: "stream" } }, (event) => {
    if (event.type === "TOOL_CALL_START") names.set(event.toolCallId, event.toolCallName);
    if (event.type !== "TOOL_CALL_ARGS" || !names.get(event.toolCallId)?.startsWith("dec.")) return;
    const buf = (args.get(event.toolCallId) ?? "") + event.delta;
    args.set(event.toolCallId, buf);
    let parsed;
    try {
      parsed = JSON.parse(buf);
    } catch {
      return; // more argument text to come
    }
    const path = `/v1/runs/${encodeURIComponent(parsed.run_id)}/approvals/${encodeURIComponent(parsed.request_id)}`;
    posts.push(post(path, answer(parsed)).then((res) => ({ ...res, path, args: parsed })));
  });
  return { r, posts: await Promise.all(posts) };
}

for (const client of CLIENTS) {
  describe(`approvals over POST (${client.name})`, () => {
    it("approving a permission lets the gated tool run; a second answer is refused with 409", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "permission to write the notes");
      const { r, posts } = await runAnswering(agent, () => ({ decision: "approve" }));
      assertClean(r);
      assert.equal(posts.length, 1, "one approval request");
      assert.equal(posts[0].status, 200, JSON.stringify(posts[0].body));
      assert.equal(posts[0].args.kind, "permission");
      const dec = r.events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "dec.permission");
      const decResult = r.events.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === dec.toolCallId);
      assert.ok(decResult, "the decision tool call gets its result");
      assert.equal(typeof decResult.content, "string");
      const write = r.events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "write_file");
      assert.ok(write, "the approved tool ran");
      const writeResult = r.events.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === write.toolCallId);
      assert.equal(writeResult.content, "wrote 5 bytes to notes.txt");
      assertInOrder(r, ["TOOL_CALL_START", "TOOL_CALL_RESULT", "TEXT_MESSAGE_START", "RUN_FINISHED"]);
      assert.match(decResult.content, /approve/);

      const again = await post(posts[0].path, { decision: "approve" });
      assert.equal(again.status, 409, JSON.stringify(again.body));
      assert.equal(typeof again.body?.error?.code, "string");
    });

    it("denying a permission aborts the run (default on_reject) with RUN_ERROR; the tool never runs", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "permission to write, then deny it");
      const { r, posts } = await runAnswering(agent, () => ({ decision: "deny", reason: "not today" }));
      assertClean(r, "RUN_ERROR");
      assert.equal(typeof r.events.at(-1).code, "string");
      assert.equal(posts.length, 1);
      assert.equal(posts[0].status, 200, JSON.stringify(posts[0].body));
      const dec = r.events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "dec.permission");
      const decResult = r.events.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === dec.toolCallId);
      assert.match(decResult.content, /denied/);
      assert.ok(!r.events.some((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "write_file"), "a denied tool never runs");
      const wrong = await post(posts[0].path, { decision: "answer", answer: "x" });
      assert.ok([409, 422].includes(wrong.status), `late wrong-kind answer: ${wrong.status} ${JSON.stringify(wrong.body)}`);
    });
  });
}
