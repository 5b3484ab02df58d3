// The official ACP client SDK (@agentclientprotocol/sdk 2.4.0, its full-v1 `unstable` entrypoint: fork
// and turn usage are unstable features) drives `agent-adaptor acp --agent reference` over stdio:
// initialize, session/new, a prompt with streamed updates and its stopReason, a permission request
// answered, session/list, session/fork, then session/resume and session/load in a new process (SQLite
// store). The SDK validates every answer against the ACP schema. AGENT_ADAPTOR_BIN names the binary.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";

const bin = process.env.AGENT_ADAPTOR_BIN;
if (!bin) throw new Error("AGENT_ADAPTOR_BIN must name the agent-adaptor binary");

/** Runs `op(ctx, seen)` against a fresh `agent-adaptor acp` on `store`; `seen` collects what arrived. */
async function withAgent(store, op) {
  const child = spawn(bin, ["acp", "--agent", "reference", "--store", store], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const seen = { updates: [], permissions: [] };
  const app = acp
    .client({ name: "agent-adaptor-acp-sdk-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      seen.updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      seen.permissions.push(params);
      const allow = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    });
  try {
    return await app.connectWith(stream, (ctx) => op(ctx, seen));
  } finally {
    child.kill();
    if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
  }
}

const of = (seen, session, kind) =>
  seen.updates.filter((n) => n.sessionId === session && n.update.sessionUpdate === kind).map((n) => n.update);
const text = (updates) => updates.map((u) => u.content.text).join("");

async function initialize(ctx) {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  assert.equal(init.protocolVersion, 1);
  return init;
}

test("the ACP SDK client drives agent-adaptor acp end to end", async () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-sdk-"));
  const store = `sqlite://${join(dir, "acp.db")}`;
  try {
    const { session, fork } = await withAgent(store, async (ctx, seen) => {
      const init = await initialize(ctx);
      assert.equal(init.agentCapabilities.loadSession, true);
      assert.deepEqual(init.agentCapabilities.sessionCapabilities, { list: {}, resume: {}, fork: {}, close: {} });

      const { sessionId: session } = await ctx.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
      const turn = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: session,
        prompt: [{ type: "text", text: "hello there" }],
      });
      assert.equal(turn.stopReason, "end_turn");
      assert.equal(turn.usage.inputTokens, 12);
      assert.equal(turn.usage.outputTokens, 34);
      const chunks = of(seen, session, "agent_message_chunk");
      assert.ok(chunks.length > 1, "the answer streams in chunks");
      assert.equal(text(chunks), "Reference reply: hello there");
      const [call] = of(seen, session, "tool_call");
      assert.equal(call.title, "echo");
      assert.ok(
        of(seen, session, "tool_call_update").some((u) => u.toolCallId === call.toolCallId && u.status === "completed"),
      );

      // A permission request, answered once with allow_once: the tool runs and the turn ends.
      const asked = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: session,
        prompt: [{ type: "text", text: "please ask permission" }],
      });
      assert.equal(asked.stopReason, "end_turn");
      assert.equal(seen.permissions.length, 1);
      assert.equal(seen.permissions[0].toolCall.title, "write_file notes.txt");
      assert.ok(of(seen, session, "tool_call").some((u) => u.title === "write_file"));

      const listed = await ctx.request(acp.methods.agent.session.list, {});
      assert.deepEqual(
        listed.sessions.map((s) => [s.sessionId, s.cwd, s.title]),
        [[session, dir, "hello there"]],
      );
      assert.ok(!Number.isNaN(Date.parse(listed.sessions[0].updatedAt)));
      assert.equal(listed.nextCursor ?? null, null);

      const { sessionId: fork } = await ctx.request(acp.methods.agent.session.fork, {
        sessionId: session,
        cwd: dir,
        mcpServers: [],
      });
      assert.notEqual(fork, session);
      const forked = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: fork,
        prompt: [{ type: "text", text: "on the fork" }],
      });
      assert.equal(forked.stopReason, "end_turn");
      assert.equal(text(of(seen, fork, "agent_message_chunk")), "Reference reply: on the fork");
      return { session, fork };
    });

    await withAgent(store, async (ctx, seen) => {
      await initialize(ctx);
      await ctx.request(acp.methods.agent.session.resume, { sessionId: session, cwd: dir });
      assert.equal(seen.updates.length, 0, "resume replays nothing");
      const next = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: session,
        prompt: [{ type: "text", text: "and now" }],
      });
      assert.equal(next.stopReason, "end_turn");

      await ctx.request(acp.methods.agent.session.load, { sessionId: fork, cwd: dir, mcpServers: [] });
      assert.deepEqual(
        of(seen, fork, "user_message_chunk").map((u) => u.content.text),
        ["hello there", "please ask permission", "on the fork"],
      );
      const listed = await ctx.request(acp.methods.agent.session.list, { cwd: dir });
      assert.deepEqual(listed.sessions.map((s) => s.sessionId), [session, fork]);
      await assert.rejects(
        ctx.request(acp.methods.agent.session.resume, { sessionId: "acp-missing", cwd: dir }),
        (e) => e.code === -32002,
      );
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
