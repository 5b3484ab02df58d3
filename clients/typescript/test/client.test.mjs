// The TypeScript client against a live `agent-adaptor serve` (dev mode, memory store, the reference
// agent; AGENT_ADAPTOR_BIN names the binary): start a run, follow its events, answer its approval,
// send a supplemental message, cancel, list, retry with an Idempotency-Key, a typed error answer —
// and an event stream cut mid-run that the follower resumes with Last-Event-ID, losing and repeating
// nothing. A second test checks the committed schema.d.ts is what openapi-typescript generates now.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import readline from "node:readline";
import { createClient, ServiceError } from "../src/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const bin = process.env.AGENT_ADAPTOR_BIN;
if (!bin) throw new Error("AGENT_ADAPTOR_BIN must name the agent-adaptor binary");

let child;
let baseUrl;

before(async () => {
  child = spawn(bin, ["serve", "--bind", "127.0.0.1:0", "--no-discover", "--store", "memory"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, RUST_LOG: "warn" },
  });
  const lines = readline.createInterface({ input: child.stdout });
  baseUrl = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no listening line within 30 s")), 30_000);
    lines.on("line", (line) => {
      const m = /agent-adaptor listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited early (${code})`)));
  });
});

after(async () => {
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
    await once(child, "exit");
  }
});

const slow = (n) => `slow ${"word ".repeat(n)}`.trim();

async function start(client, prompt, extra = {}) {
  const { data, error, response } = await client.api.POST("/v1/agents/{agent}/runs", {
    params: { path: { agent: "reference" } },
    body: { prompt, ...extra },
  });
  assert.equal(response.status, 201, JSON.stringify(error));
  return data;
}

test("a run is started, followed, approved, messaged, cancelled and listed through the client", async () => {
  const client = createClient({ baseUrl });

  // An approval: the follower sees the request, the client answers it, the run goes on to done.
  const asked = await start(client, "please ask permission");
  const types = [];
  for await (const ev of client.events(asked.run_id)) {
    types.push(ev.type);
    if (ev.type === "approval_request") {
      const { data, response } = await client.api.POST("/v1/runs/{run_id}/approvals/{id}", {
        params: { path: { run_id: asked.run_id, id: ev.data.id } },
        body: { decision: "approve" },
      });
      assert.equal(response.status, 200);
      assert.ok(data);
    }
  }
  assert.ok(types.includes("approval_request") && types.at(-1) === "done", types.join(","));
  const done = await client.api.GET("/v1/runs/{run_id}", { params: { path: { run_id: asked.run_id } } });
  assert.equal(done.data.state, "succeeded");

  // A supplemental message to a running run.
  const talking = await start(client, slow(20));
  const sent = await client.api.POST("/v1/runs/{run_id}/messages", {
    params: { path: { run_id: talking.run_id } },
    body: { text: "also say bye" },
  });
  assert.equal(sent.response.status, 202);
  for await (const _ of client.events(talking.run_id));
  const talked = await client.api.GET("/v1/runs/{run_id}", { params: { path: { run_id: talking.run_id } } });
  assert.match(JSON.stringify(talked.data.result), /also say bye/);

  // Cancel.
  const cancelled = await start(client, slow(200));
  const cancel = await client.api.POST("/v1/runs/{run_id}/cancel", { params: { path: { run_id: cancelled.run_id } } });
  assert.equal(cancel.response.status, 202);
  for await (const _ of client.events(cancelled.run_id));
  const state = await client.api.GET("/v1/runs/{run_id}", { params: { path: { run_id: cancelled.run_id } } });
  assert.equal(state.data.state, "cancelled");

  // Listing, newest first.
  const listed = await client.api.GET("/v1/runs", { params: { query: { agent: "reference", limit: 10 } } });
  assert.deepEqual(
    listed.data.runs.slice(0, 3).map((r) => r.run_id),
    [cancelled.run_id, talking.run_id, asked.run_id],
  );

  // An Idempotency-Key retry replays the first answer.
  const once1 = await client.api.POST("/v1/agents/{agent}/runs", {
    params: { path: { agent: "reference" }, header: { "Idempotency-Key": "ts-client-1" } },
    body: { prompt: "only once" },
  });
  const once2 = await client.api.POST("/v1/agents/{agent}/runs", {
    params: { path: { agent: "reference" }, header: { "Idempotency-Key": "ts-client-1" } },
    body: { prompt: "only once" },
  });
  assert.equal(once2.data.run_id, once1.data.run_id);
  assert.equal(once2.response.headers.get("idempotent-replayed"), "true");

  // Errors come back typed.
  const missing = await client.api.GET("/v1/runs/{run_id}", { params: { path: { run_id: "run-missing" } } });
  assert.equal(missing.response.status, 404);
  assert.equal(missing.error.error.code, "not_found");
  await assert.rejects(
    async () => {
      for await (const _ of client.events("run-missing"));
    },
    (e) => e instanceof ServiceError && e.status === 404 && e.code === "not_found",
  );
});

test("an event stream cut mid-run is resumed with Last-Event-ID: every event once, in order", async () => {
  const resumedWith = [];
  let cuts = 0;
  // A fetch that cuts the first two event streams after their third frame.
  const cutting = async (input, init) => {
    const response = await fetch(input, init);
    const url = typeof input === "string" ? input : input.url;
    if (!url.includes("/events")) return response;
    const headers = new Headers(init?.headers ?? input.headers);
    resumedWith.push(headers.get("last-event-id"));
    if (cuts >= 2) return response;
    cuts += 1;
    const reader = response.body.getReader();
    let frames = 0;
    const body = new ReadableStream({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        controller.enqueue(value);
        frames += (new TextDecoder().decode(value).match(/\n\n/g) ?? []).length;
        if (frames >= 3) {
          await reader.cancel();
          controller.close();
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const client = createClient({ baseUrl, fetch: cutting });
  const run = await start(client, slow(30));
  const seqs = [];
  let text = "";
  for await (const ev of client.events(run.run_id, { retryDelayMs: 20 })) {
    if (ev.seq !== undefined) seqs.push(ev.seq);
    if (ev.type === "text_delta" && typeof ev.data.text === "string") text += ev.data.text;
  }
  assert.equal(cuts, 2);
  assert.equal(resumedWith[0], null, "the first request starts from the beginning");
  assert.ok(resumedWith.slice(1).every((id) => /^\d+$/.test(id)), `resumed with ${resumedWith}`);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1), "contiguous sequences from 1, none repeated");
  assert.match(text, /^Reference reply: slow word/);
});

test("the committed schema.d.ts is what openapi-typescript generates from openapi/openapi.json", () => {
  const dir = mkdtempSync(join(tmpdir(), "ts-client-"));
  try {
    const out = join(dir, "schema.d.ts");
    execFileSync(
      join(here, "..", "node_modules", ".bin", "openapi-typescript"),
      [join(here, "..", "..", "..", "openapi", "openapi.json"), "-o", out],
      { stdio: "ignore" },
    );
    assert.equal(
      readFileSync(out, "utf8"),
      readFileSync(join(here, "..", "src", "schema.d.ts"), "utf8"),
      "regenerate with `npm run generate` in clients/typescript",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
