// The official ACP client SDK (@agentclientprotocol/sdk 2.4.0) drives the service's ACP edge over
// Streamable HTTP (`createHttpStream` from its `experimental/http-client` entrypoint) against a fresh
// `agent-adaptor serve` (dev mode, SQLite in a temp dir): initialize, session/new, a streamed prompt,
// a permission request answered, a cancelled prompt, then a second connection that loads the session
// (its history replayed from the durable log) and continues it. AGENT_ADAPTOR_BIN names the binary.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import readline from "node:readline";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const bin = process.env.AGENT_ADAPTOR_BIN;
if (!bin) throw new Error("AGENT_ADAPTOR_BIN must name the agent-adaptor binary");

const LISTEN = /agent-adaptor listening on (http:\/\/127\.0\.0\.1:\d+)/;

async function serve(dir) {
  const child = spawn(
    bin,
    ["serve", "--bind", "127.0.0.1:0", "--no-discover", "--store", `sqlite://${join(dir, "svc.db")}`],
    { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, RUST_LOG: "warn" } },
  );
  const lines = readline.createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no listening line within 30 s")), 30_000);
    lines.on("line", (line) => {
      const m = LISTEN.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited early (${code})`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

/** Runs `op(ctx, seen)` over one HTTP connection to `endpoint`; `seen` collects what arrived. */
async function withConnection(endpoint, op) {
  const stream = createHttpStream(endpoint);
  const seen = { updates: [], permissions: [] };
  const app = acp
    .client({ name: "agent-adaptor-acp-http-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      seen.updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      seen.permissions.push(params);
      const allow = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    });
  return app.connectWith(stream, (ctx) => op(ctx, seen));
}

const of = (seen, session, kind) =>
  seen.updates.filter((n) => n.sessionId === session && n.update.sessionUpdate === kind).map((n) => n.update);
const text = (updates) => updates.map((u) => u.content.text).join("");

test("the ACP SDK's HTTP client drives /v1/agents/{agent}/acp and a new connection loads the session", async () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-http-"));
  const svc = await serve(dir);
  const endpoint = `${svc.url}/v1/agents/reference/acp`;
  try {
    const session = await withConnection(endpoint, async (ctx, seen) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      assert.equal(init.protocolVersion, 1);
      assert.equal(init.agentCapabilities.loadSession, true);

      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
      const turn = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "hello there" }],
      });
      assert.equal(turn.stopReason, "end_turn");
      const chunks = of(seen, sessionId, "agent_message_chunk");
      assert.ok(chunks.length > 1, "the answer streams in chunks");
      assert.equal(text(chunks), "Reference reply: hello there");

      // A permission request reaches the client on the session's stream; its answer goes back in a POST.
      const asked = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "please ask permission" }],
      });
      assert.equal(asked.stopReason, "end_turn");
      assert.equal(seen.permissions.length, 1);
      assert.equal(seen.permissions[0].toolCall.title, "write_file notes.txt");

      // session/cancel (a notification) ends a running prompt with stopReason cancelled.
      const slow = ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "slow " + "word ".repeat(40) }],
      });
      const deadline = Date.now() + 10_000;
      while (of(seen, sessionId, "agent_message_chunk").length === chunks.length && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
      assert.equal((await slow).stopReason, "cancelled");

      // Sessions listed over HTTP are this tenant's sessions of this agent.
      const listed = await ctx.request(acp.methods.agent.session.list, {});
      assert.deepEqual(listed.sessions.map((s) => s.sessionId), [sessionId]);
      return sessionId;
    });

    await withConnection(endpoint, async (ctx, seen) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      await ctx.request(acp.methods.agent.session.load, { sessionId: session, cwd: dir, mcpServers: [] });
      assert.deepEqual(
        of(seen, session, "user_message_chunk").map((u) => u.content.text.trim().split(" ")[0]),
        ["hello", "please", "slow"],
        "the new connection replays the session's history from the log",
      );
      assert.equal(text(of(seen, session, "agent_message_chunk")).startsWith("Reference reply: hello there"), true);
      const next = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: session,
        prompt: [{ type: "text", text: "and now" }],
      });
      assert.equal(next.stopReason, "end_turn");
      await assert.rejects(
        ctx.request(acp.methods.agent.session.load, { sessionId: "acp-missing", cwd: dir, mcpServers: [] }),
        (e) => e.code === -32002,
      );
    });
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
