// The printed result: the issue's summary table (medians), the detailed figures (median, min–max),
// what each CLI was started with, and the machine's load during the run.
import os from "node:os";

import { added, fmt, summary, table } from "./stats.mjs";

const PEER = "ag-ui-claude-sdk";
const OURS = "agent-adaptor";

const pick = (runs, key) => summary((runs ?? []).map((r) => r[key]));

/** Prints everything to stdout. */
export function report({ attribution, results, errors, seen, rssStart, rssEnd, loads, cliEnv, warnings, config, servers }) {
  const r = (p) => results[p] ?? { cold: [], warm: [], cpu: [], waves: [] };
  const s = {};
  for (const p of Object.keys(results)) {
    s[p] = {
      coldTtft: pick(r(p).cold, "ttft"),
      coldSpan: pick(r(p).cold, "span"),
      warmTtft: pick(r(p).warm, "ttft"),
      warmSpan: pick(r(p).warm, "span"),
      coldTotal: pick(r(p).cold, "total"),
      warmTotal: pick(r(p).warm, "total"),
      cpu: summary(r(p).cpu),
      deltas: pick([...r(p).cold, ...r(p).warm], "deltas"),
      waves: summary(r(p).waves),
      clientCpu: pick([...r(p).cold, ...r(p).warm], "clientCpu"),
      ownCpu: pick(r(p).cold, "ownCpu"),
    };
  }
  const base = s["cli-live"];
  const cols = ["cli-live", ...servers];
  const ms = (x) => (x ? `${x.median.toFixed(0)}` : "—");
  const pair = (p) => (s[p] ? `${ms(s[p].coldSpan)} / ${ms(s[p].warmSpan)} ms` : "—");
  const pct = (p) => (s[p]?.waves && base?.waves ? `${((100 * s[p].waves.median) / base.waves.median).toFixed(0)} %` : "—");
  const rss = (p) => (rssStart[p] != null ? `${rssStart[p].toFixed(1)} MB (${rssEnd[p]?.toFixed(1) ?? "—"} MB after the runs)` : "—");

  const load = summary(loads);
  console.log(`\n## Side by side with the CLI and a peer (${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC)\n`);
  console.log(
    `${config.runs} alternating samples per path (after one warm-up each), ${config.waves} wave(s) of ${config.concurrency} ` +
      `concurrent runs per path, ${config.deltas} text deltas per reply from the instant mock; ` +
      `load average ${load ? `${load.min.toFixed(1)}–${load.max.toFixed(1)}` : "?"} on ${os.cpus().length} CPUs.` +
      (config.ci ? " CI variant: few samples, timings are not judged." : "") +
      "\n",
  );
  const header = ["path", "CLI alone (live stream-json, the driver's flags)", ...servers, "goal"];
  const goal = {
    span: "≤ CLI + 2 ms (≤ 10 µs/event)",
    cpu: "≤ +0.02 s",
    cold: "≤ +5 ms",
    warm: "≤ +2 ms",
    thr: "≥ 98 %",
    rss: "≤ 20 MB",
  };
  const row = (label, f, g) => [label, ...cols.map(f), g];
  console.log(
    table(header, [
      row(`${config.deltas} text deltas, first → last text at the client (cold / warm)`, (p) => pair(p), goal.span),
      row(
        "process-tree CPU per cold run, added over the CLI alone",
        (p) => (p === "cli-live" ? `(${fmt(s[p]?.cpu, "s", 2)})` : added(base?.cpu, s[p]?.cpu, "s", 2)),
        goal.cpu,
      ),
      row(
        "cold time to first text, added (vs the CLI with the same flags)",
        (p) => (p === "cli-live" ? `(${ms(base?.coldTtft)} ms)` : added(base?.coldTtft, s[p]?.coldTtft)),
        goal.cold,
      ),
      row(
        "warm time to first text, added",
        (p) => (p === "cli-live" ? `(${ms(base?.warmTtft)} ms)` : added(base?.warmTtft, s[p]?.warmTtft)),
        goal.warm,
      ),
      row(
        `${config.concurrency} concurrent, throughput vs the CLI alone`,
        (p) => (p === "cli-live" ? `(${s[p]?.waves ? s[p].waves.median.toFixed(2) : "—"} runs/s)` : pct(p)),
        goal.thr,
      ),
      row("server RSS idle", (p) => (p === "cli-live" ? "—" : rss(p)), goal.rss),
    ]),
  );

  if (config.codex && s["codex-alone"]) {
    const c = s["codex-alone"];
    const o = s["agent-adaptor (codex)"];
    const cpair = (x) => (x ? `${ms(x.coldSpan)} / ${ms(x.warmSpan)} ms` : "—");
    console.log("\nCodex (the app-server, the driver's default transport), alone vs served through AG-UI:\n");
    console.log(
      table(["path", "Codex alone (app-server)", "agent-adaptor", "goal"], [
        [`${config.deltas} text deltas, first → last text at the client (cold / warm)`, cpair(c), cpair(o), goal.span],
        ["process-tree CPU per cold run, added over the CLI alone", `(${fmt(c.cpu, "s", 2)})`, added(c.cpu, o?.cpu, "s", 2), goal.cpu],
        ["cold time to first text, added", `(${ms(c.coldTtft)} ms)`, added(c.coldTtft, o?.coldTtft), goal.cold],
        ["warm time to first text, added", `(${ms(c.warmTtft)} ms)`, added(c.warmTtft, o?.warmTtft), goal.warm],
      ]),
    );
  }

  console.log("\nEvery figure, median (min–max); times from the start of the run (spawn for the CLI alone, `runAgent` for a server):\n");
  const all = [
    "cli-oneshot", "cli-live", "cli-live-minimal",
    ...servers.flatMap((n) => [n, `${n} (raw SSE)`]),
    "codex-alone", "agent-adaptor (codex)",
  ].filter((p) => s[p]);
  console.log(
    table(
      ["path", "cold: first text", "cold: first → last text", "cold: done", "warm: first text", "warm: first → last text", "warm: done", "CPU per cold run", `${config.concurrency}-way throughput`, "text events per run", "client CPU per run", "server's own CPU per cold run"],
      all.map((p) => [
        p,
        fmt(s[p].coldTtft),
        fmt(s[p].coldSpan),
        fmt(s[p].coldTotal),
        fmt(s[p].warmTtft),
        fmt(s[p].warmSpan),
        fmt(s[p].warmTotal),
        fmt(s[p].cpu, "s", 2),
        s[p].waves ? fmt(s[p].waves, "runs/s", 2) : "—",
        s[p].deltas ? `${s[p].deltas.median}` : "—",
        fmt(s[p].clientCpu, "ms", 1, 1000),
        fmt(s[p].ownCpu, "ms", 0, 1000),
      ]),
    ),
  );

  if (attribution) printAttribution(attribution, config);

  console.log("\nWhat each CLI was started with (argv after the binary; for the servers read from /proc):\n");
  for (const [p, v] of Object.entries(seen)) {
    console.log(`- ${p}: \`${v.argv.slice(1).join(" ")}\``);
    if (v.env) {
      const diff = envDiff(v.base ?? cliEnv, v.env);
      if (diff) console.log(`  environment vs the CLI alone: ${diff}`);
    }
  }
  for (const [p, w] of warnings) {
    console.log(`- the client warned ${w.count} times on ${p}'s runs (counted, not printed), e.g. ${JSON.stringify(w.first)}`);
  }
  for (const [p, list] of Object.entries(errors)) {
    console.log(`\nDID NOT COMPLETE: ${p}: ${list[0]}${list.length > 1 ? ` (+${list.length - 1} more)` : ""}`);
  }
}

/** Variables added, removed or changed in `b` relative to `a` (values of changed path-like ones shown). */
function envDiff(a, b) {
  const out = [];
  for (const k of Object.keys(b).sort()) {
    if (!(k in a)) out.push(`+${k}=${b[k]}`);
    else if (a[k] !== b[k]) out.push(`~${k}=${b[k]}`);
  }
  for (const k of Object.keys(a).sort()) if (!(k in b)) out.push(`-${k}`);
  return out.join(", ");
}

/**
 * Joins the driver's per-delta timestamps (`read parsed emitted "text"` lines, CLOCK_REALTIME ns, in
 * order) with the client's arrival times of agent-adaptor's runs (same order: one run is `deltas` lines).
 * Returns per kind (cold, warm) the per-run medians of each stage and the first → last span at each point.
 */
export function attribute(file, runs, deltas, expected) {
  const lines = file.split("\n").filter((l) => l.trim() !== "");
  const out = { kinds: {}, skipped: 0 };
  runs.forEach((run, j) => {
    const group = lines.slice(j * deltas, (j + 1) * deltas).map((l) => {
      const [read, parsed, emitted, ...rest] = l.split(" ");
      return { read: Number(read) / 1e6, parsed: Number(parsed) / 1e6, emitted: Number(emitted) / 1e6, text: JSON.parse(rest.join(" ")) };
    });
    if (group.length !== deltas || group.map((g) => g.text).join("") !== expected || run.wall.length !== deltas) {
      out.skipped++;
      return;
    }
    const med = (f) => summary(group.map(f)).median;
    const gaps = group.slice(1).map((g, i) => g.read - group[i].read);
    (out.kinds[run.kind] ??= []).push({
      readToParsed: med((g) => g.parsed - g.read),
      parsedToEmitted: med((g) => g.emitted - g.parsed),
      emittedToClient: med((g, i) => run.wall[i] - g.emitted),
      readToClient: med((g, i) => run.wall[i] - g.read),
      spanRead: group.at(-1).read - group[0].read,
      spanEmitted: group.at(-1).emitted - group[0].emitted,
      spanClient: run.wall.at(-1) - run.wall[0],
      maxGapRead: Math.max(...gaps),
    });
  });
  return out;
}

function printAttribution(a, config) {
  console.log(
    `\nWhere a delta's time goes in agent-adaptor (AGENT_ADAPTOR_CLAUDE_TIMING on; CLOCK_REALTIME; per run the median over its ` +
      `${config.deltas} deltas, then median (min–max) over runs${a.skipped ? `; ${a.skipped} run(s) not joined` : ""}). "read" is when ` +
      "the line left the shared stdout reader (after its JSON check), \"parsed\" after the typed decode, \"emitted\" after the " +
      "translated events were handed to the run's sink, \"client\" when @ag-ui/client (or the raw SSE reader) delivered TEXT_MESSAGE_CONTENT:\n",
  );
  const us = (xs, f) => fmt(summary(xs.map(f)), "µs", 0, 1000);
  const msf = (xs, f) => fmt(summary(xs.map(f)), "ms", 1);
  console.log(
    table(
      ["run", "read → parsed", "parsed → emitted", "emitted → client", "read → client", "first → last at read", "at emitted", "at client", "largest gap between reads"],
      Object.entries(a.kinds).map(([k, v]) => [
        `${k} (${v.length})`,
        us(v, (r) => r.readToParsed),
        us(v, (r) => r.parsedToEmitted),
        us(v, (r) => r.emittedToClient),
        us(v, (r) => r.readToClient),
        msf(v, (r) => r.spanRead),
        msf(v, (r) => r.spanEmitted),
        msf(v, (r) => r.spanClient),
        msf(v, (r) => r.maxGapRead),
      ]),
    ),
  );
}
