// ACP prompt latency by transport (BENCHMARKS.md, "ACP over HTTP"): the same reference agent answering "hi"
// (default 20 ms between chunks) driven by the official @agentclientprotocol/sdk client over stdio
// (`agent-adaptor acp`), over Streamable HTTP (`serve`, /v1/agents/reference/acp) and through the
// `acp --url` bridge (stdio to the editor, HTTP to `serve`). One session per transport, ACP_BENCH_RUNS
// prompts in a row after one warm-up; prints p50/p90 per prompt and the difference from stdio.
//
//   AGENT_ADAPTOR_BIN=target/debug/agent-adaptor ACP_BENCH_RUNS=30 node tests/acp-node/bench/latency.mjs
import { spawn } from "node:child_process";
import { once } from "node:events";
import { tmpdir } from "node:os";
import readline from "node:readline";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const bin = process.env.AGENT_ADAPTOR_BIN;
if (!bin) throw new Error("AGENT_ADAPTOR_BIN must name the agent-adaptor binary");
const runs = Number(process.env.ACP_BENCH_RUNS ?? 30);

async function serve() {
  const child = spawn(bin, ["serve", "--bind", "127.0.0.1:0", "--no-discover", "--store", "memory"], {
    stdio: ["ignore", "pipe", "ignore"],
    env: { ...process.env, RUST_LOG: "error" },
  });
  const lines = readline.createInterface({ input: child.stdout });
  const url = await new Promise((resolve) =>
    lines.on("line", (l) => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(l);
      if (m) resolve(m[1]);
    }),
  );
  return { url, child };
}

function stdio(args) {
  const child = spawn(bin, ["acp", "--agent", "reference", ...args], { stdio: ["pipe", "pipe", "ignore"] });
  return { stream: acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)), child };
}

async function measure(stream) {
  const app = acp.client({ name: "acp-latency" }).onNotification(acp.methods.client.session.update, () => {});
  return app.connectWith(stream, async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: tmpdir(), mcpServers: [] });
    const prompt = () =>
      ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
    await prompt();
    const times = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await prompt();
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b);
  });
}

const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const svc = await serve();
const results = {};
{
  const { stream, child } = stdio([]);
  results["stdio (acp)"] = await measure(stream);
  child.kill();
}
results["HTTP (/v1/agents/reference/acp)"] = await measure(createHttpStream(`${svc.url}/v1/agents/reference/acp`));
{
  const { stream, child } = stdio(["--url", svc.url]);
  results["acp --url bridge"] = await measure(stream);
  child.kill();
}
svc.child.kill("SIGTERM");
await once(svc.child, "exit");
const base = results["stdio (acp)"];
console.log(`| transport | p50 ms | p90 ms | p50 vs stdio |`);
console.log(`|---|---|---|---|`);
for (const [name, xs] of Object.entries(results)) {
  const d = pct(xs, 50) - pct(base, 50);
  console.log(
    `| ${name} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 90).toFixed(1)} | ${d >= 0 ? "+" : ""}${d.toFixed(1)} ms (×${(pct(xs, 50) / pct(base, 50)).toFixed(2)}) |`,
  );
}
process.exit(0);
