// The peer benchmark (issue #28): the real Claude CLI alone, the Python peer `ag-ui-claude-sdk` and
// `agent-adaptor serve`, on the same binary, the same offline environment and the same instant mock
// model, the servers driven through the same AG-UI client (@ag-ui/client, pinned). Paths alternate
// within one run; every figure is a median with min–max. Prints the tables and exits non-zero when a
// path did not complete (never on timings). Started by run.sh, which builds and installs what it needs.
//
//   node bench.mjs [--runs 20] [--waves 3] [--concurrency 8] [--deltas 200] [--ci] [--no-peer]
//   node bench.mjs --attribution [--runs 9]   # per-delta timestamps of the server (no waves), see report
//
// Environment: AGENT_ADAPTOR_BIN, MOCK_MODEL_SERVER_BIN, AGENT_ADAPTOR_CLAUDE_BIN, PEER_PYTHON (the venv's
// python; unset with --no-peer), and AGENT_ADAPTOR_CODEX_BIN for the Codex rows (Codex alone vs served;
// without it they are left out with a SKIPPED line).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { randomUUID } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { countWarningsAs, newThread, rawRun, timedRun, warnings } from "./lib/agui.mjs";
import { DRIVER_BIDI_ARGS, MINIMAL_BIDI_ARGS, liveProcess, oneShot } from "./lib/cli.mjs";
import { codexAlone } from "./lib/codex.mjs";
import { cmdline, descendantsMatching, environ, loadAverage, ownCpuSeconds, rssMb, treeCpuSeconds } from "./lib/procfs.mjs";
import { startAgentAdaptor, startMock, startPeer } from "./lib/services.mjs";
import { attribute, report } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: opt } = parseArgs({
  options: {
    runs: { type: "string" },
    waves: { type: "string" },
    concurrency: { type: "string", default: "8" },
    deltas: { type: "string", default: "200" },
    ci: { type: "boolean", default: false },
    "no-peer": { type: "boolean", default: false },
    attribution: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
});
const RUNS = Number(opt.runs ?? (opt.ci ? 3 : 20));
const WAVES = opt.attribution ? 0 : Number(opt.waves ?? (opt.ci ? 1 : 3));
const CONCURRENCY = Number(opt.concurrency);
const DELTAS = Number(opt.deltas);
/** How long serve keeps a thread's idle CLI; samples wait it out between runs (outside every timing). */
const IDLE_MS = 1500;
const PROMPT = "Say the numbered words.";
const EXPECTED = Array.from({ length: DELTAS }, (_, i) => `d${String(i + 1).padStart(4, "0")} `).join("");

function need(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is not set (run benches/peers/run.sh)`);
    process.exit(2);
  }
  return v;
}
const cli = need("AGENT_ADAPTOR_CLAUDE_BIN");
const aaBin = need("AGENT_ADAPTOR_BIN");
const mockBin = need("MOCK_MODEL_SERVER_BIN");
const python = opt["no-peer"] ? null : need("PEER_PYTHON");
const codexCli = process.env.AGENT_ADAPTOR_CODEX_BIN || null;
if (!codexCli) console.log("SKIPPED: the Codex rows (AGENT_ADAPTOR_CODEX_BIN is not set: scripts/install-clis.sh)");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cliPattern = new RegExp(cli.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));

/** Waits until `server` has no CLI process left (at most `ms`). */
async function noCliUnder(server, ms = 30_000) {
  const until = performance.now() + ms;
  while (descendantsMatching(server.pid, cliPattern).length > 0) {
    if (performance.now() > until) throw new Error(`${server.name}: its CLI processes did not end within ${ms} ms`);
    await sleep(50);
  }
}

/** Ends the kept CLIs of `server` between samples. */
async function release(server) {
  if (server.release) await server.release();
  await noCliUnder(server, IDLE_MS + 30_000);
}

/** Checks a run's text; throws with what differed. */
function check(what, fig) {
  if (fig.text !== EXPECTED) {
    throw new Error(`${what}: text differs (${fig.text.length} of ${EXPECTED.length} chars, ${fig.deltas} deltas): ${JSON.stringify(fig.text.slice(0, 60))}…`);
  }
  return fig;
}

const scratch = mkdtempSync(path.join(os.tmpdir(), "peers-bench-"));
const results = {}; // path -> { cold: [], warm: [], cpu: [], waves: [] }
const errors = {}; // path -> [message]
const seen = {}; // path -> { argv, env } of the CLI it ran
const fail = (p, e) => {
  (errors[p] ??= []).push(String(e?.message ?? e));
  console.error(`!! ${p}: ${e?.message ?? e}`);
};
const rec = (p) => (results[p] ??= { cold: [], warm: [], cpu: [], waves: [] });
const aaRuns = []; // agent-adaptor's Claude runs in order (warm-up included), for the attribution

const mock = await startMock(mockBin, { deltas: DELTAS, dir: path.join(scratch, "env"), codex: Boolean(codexCli) });
const cliEnv = mock.env;
const servers = [];
const stops = [mock.stop];
try {
  const timingFile = opt.attribution ? path.join(scratch, "timing.log") : undefined;
  const aa = await startAgentAdaptor(aaBin, { cli, codexCli, mock, dir: scratch, idleMs: IDLE_MS, timingFile });
  stops.push(aa.stop);
  servers.push(aa);
  if (python) {
    const peer = await startPeer(python, path.join(here, "peer_server.py"), { cli, mock, dir: scratch });
    stops.push(peer.stop);
    servers.push(peer);
  }
  await sleep(2000);
  const rssStart = Object.fromEntries(servers.map((s) => [s.name, rssMb(s.pid)]));

  /** One sample of a path: cold (and warm when the path has it). */
  const samplers = {
    "cli-oneshot": async () => {
      const f = check("one-shot", await oneShot(cli, cliEnv, mock.cwd, PROMPT));
      return { cold: f, cpu: f.cpu };
    },
    "cli-live": async () => {
      const r = await liveProcess(cli, DRIVER_BIDI_ARGS, cliEnv, mock.cwd, PROMPT);
      seen["cli-live"] ??= { argv: r.argv };
      return { cold: check("cold", r.cold), warm: check("warm", r.warm), cpu: r.cold.cpu };
    },
    ...(opt.ci
      ? {}
      : {
          "cli-live-minimal": async () => {
            const r = await liveProcess(cli, MINIMAL_BIDI_ARGS, cliEnv, mock.cwd, PROMPT);
            seen["cli-live-minimal"] ??= { argv: r.argv };
            return { cold: check("cold", r.cold), warm: check("warm", r.warm), cpu: r.cold.cpu };
          },
        }),
    ...Object.fromEntries(
      servers.map((s) => [
        s.name,
        async () => {
          countWarningsAs(s.name);
          const agent = newThread(s.agui);
          const cpu0 = treeCpuSeconds(s.pid);
          const own0 = ownCpuSeconds(s.pid);
          const cold = check("cold", await timedRun(agent, PROMPT));
          const cpu = treeCpuSeconds(s.pid) - cpu0;
          cold.ownCpu = ownCpuSeconds(s.pid) - own0;
          if (!seen[s.name]) {
            const [pid] = descendantsMatching(s.pid, cliPattern);
            if (pid) seen[s.name] = { argv: cmdline(pid), env: environ(pid) };
          }
          const warm = check("warm", await timedRun(agent, PROMPT));
          if (s.name === "agent-adaptor") aaRuns.push({ kind: "cold", wall: cold.wall }, { kind: "warm", wall: warm.wall });
          await release(s);
          return { cold, warm, cpu };
        },
      ]),
    ),
  };
  if (opt.attribution) {
    // The same servers read without @ag-ui/client: what the client library costs.
    for (const s of servers) {
      samplers[`${s.name} (raw SSE)`] = async () => {
        const thread = `bench-raw-${randomUUID()}`;
        const cold = check("cold", await rawRun(s.agui, thread, PROMPT));
        const warm = check("warm", await rawRun(s.agui, thread, PROMPT));
        if (s.name === "agent-adaptor") aaRuns.push({ kind: "cold, raw SSE", wall: cold.wall }, { kind: "warm, raw SSE", wall: warm.wall });
        await release(s);
        return { cold, warm, cpu: NaN };
      };
    }
  }
  if (codexCli) {
    const codexPattern = new RegExp(codexCli.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    samplers["codex-alone"] = async () => {
      const r = await codexAlone(codexCli, mock.codex.env, mock.codex.cwd, PROMPT);
      seen["codex-alone"] ??= { argv: r.argv };
      return { cold: check("cold", r.cold), warm: check("warm", r.warm), cpu: r.cold.cpu };
    };
    samplers["agent-adaptor (codex)"] = async () => {
      countWarningsAs("agent-adaptor (codex)");
      const agent = newThread(aa.codexAgui);
      const cpu0 = treeCpuSeconds(aa.pid);
      const own0 = ownCpuSeconds(aa.pid);
      const cold = check("cold", await timedRun(agent, PROMPT));
      const cpu = treeCpuSeconds(aa.pid) - cpu0;
      cold.ownCpu = ownCpuSeconds(aa.pid) - own0;
      if (!seen["agent-adaptor (codex)"]) {
        const [pid] = descendantsMatching(aa.pid, codexPattern);
        if (pid) seen["agent-adaptor (codex)"] = { argv: cmdline(pid), env: environ(pid), base: mock.codex.env };
      }
      const warm = check("warm", await timedRun(agent, PROMPT));
      const until = performance.now() + IDLE_MS + 30_000;
      while (descendantsMatching(aa.pid, codexPattern).length > 0 && performance.now() < until) await sleep(50);
      return { cold, warm, cpu };
    };
  }
  const paths = Object.keys(samplers);

  console.error(`== warm-up: one sample per path (${paths.join(", ")})`);
  for (const p of paths) {
    try {
      await samplers[p]();
    } catch (e) {
      fail(p, e);
    }
  }
  const loads = [loadAverage()];
  console.error(`== ${RUNS} alternating samples per path`);
  for (let i = 0; i < RUNS; i++) {
    const order = paths.map((_, k) => paths[(k + i) % paths.length]);
    for (const p of order) {
      if (errors[p]) continue;
      try {
        const s = await samplers[p]();
        rec(p).cold.push(s.cold);
        if (s.warm) rec(p).warm.push(s.warm);
        rec(p).cpu.push(s.cpu);
      } catch (e) {
        fail(p, e);
      }
    }
    loads.push(loadAverage());
  }

  // Throughput: waves of CONCURRENCY cold runs started at once, paths alternating wave by wave.
  const waveRunners = {
    "cli-live": async () => {
      const exits = [];
      const runs = Array.from({ length: CONCURRENCY }, async () => {
        const r = await liveProcess(cli, DRIVER_BIDI_ARGS, cliEnv, mock.cwd, PROMPT, { warm: false, closeAfterCold: true });
        check("concurrent", r.cold);
        exits.push(r.exited);
      });
      return { runs, after: async () => Promise.all(exits) };
    },
    ...Object.fromEntries(
      servers.map((s) => [
        s.name,
        async () => (countWarningsAs(s.name), {
          runs: Array.from({ length: CONCURRENCY }, async () => check("concurrent", await timedRun(newThread(s.agui), PROMPT))),
          after: () => release(s),
        }),
      ]),
    ),
  };
  const wavePaths = Object.keys(waveRunners);
  console.error(`== ${WAVES} waves of ${CONCURRENCY} concurrent cold runs per path`);
  for (let w = 0; w < WAVES; w++) {
    const order = wavePaths.map((_, k) => wavePaths[(k + w) % wavePaths.length]);
    for (const p of order) {
      if (errors[p]) continue;
      try {
        const t0 = performance.now();
        const { runs, after } = await waveRunners[p]();
        await Promise.all(runs);
        const secs = (performance.now() - t0) / 1000;
        rec(p).waves.push(CONCURRENCY / secs);
        await after();
      } catch (e) {
        fail(p, e);
      }
    }
    loads.push(loadAverage());
  }
  for (const s of servers) await noCliUnder(s).catch((e) => fail(s.name, e));
  await sleep(1000);
  const rssEnd = Object.fromEntries(servers.map((s) => [s.name, rssMb(s.pid)]));

  const attribution = timingFile ? attribute(readFileSync(timingFile, "utf8"), aaRuns, DELTAS, EXPECTED) : null;
  report({
    attribution,
    results, errors, seen, rssStart, rssEnd, loads, cliEnv, warnings,
    config: { runs: RUNS, waves: WAVES, concurrency: CONCURRENCY, deltas: DELTAS, ci: opt.ci, cli, codex: Boolean(codexCli) },
    servers: servers.map((s) => s.name),
  });
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  if (!opt.keep) rmSync(scratch, { recursive: true, force: true });
  else console.error(`kept ${scratch}`);
}
const failed = Object.keys(errors);
if (failed.length) {
  console.log(`FAILED: ${failed.length} path(s) did not complete: ${failed.join(", ")}`);
  process.exit(1);
}
console.log(`peer bench: every path completed (${RUNS} samples, ${WAVES} waves of ${CONCURRENCY})`);
