// One AG-UI run through the real @ag-ui/client HttpAgent, timed on the client: start of `runAgent` →
// first TEXT_MESSAGE_CONTENT → last TEXT_MESSAGE_CONTENT → RUN_FINISHED. The same client and the same
// clock for every server.
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";

/** A client agent on a fresh thread of the AG-UI endpoint at `url`. */
export function newThread(url) {
  return new HttpAgent({ url, threadId: `bench-${randomUUID()}` });
}

/**
 * Client warnings per label: the client's console.warn output is counted, not printed (printing hundreds
 * of lines per run would time the terminal, not the server). Runs of one label at a time.
 */
export const warnings = new Map();
let label = "?";
console.warn = (...args) => {
  const w = warnings.get(label) ?? { count: 0, first: String(args[0]).slice(0, 160) };
  w.count++;
  warnings.set(label, w);
};

/** Counts the client warnings that follow under `name`. */
export function countWarningsAs(name) {
  label = name;
}

/**
 * `wall` holds each TEXT_MESSAGE_CONTENT's arrival as CLOCK_REALTIME milliseconds, to join with the
 * driver's timestamps (`AGENT_ADAPTOR_CLAUDE_TIMING`).
 *
 * Sends `prompt` as the next user message of `agent`'s thread and times the run. Throws when the run
 * errors or does not finish; the caller checks the text.
 */
export async function timedRun(agent, prompt) {
  agent.addMessage({ id: `u-${randomUUID()}`, role: "user", content: prompt });
  const t = { first: null, last: null, finished: null, deltas: 0, text: "", error: null, wall: [] };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await runOnce(agent, t);
  const cpu = process.cpuUsage(cpu0);
  if (t.error) throw new Error(`RUN_ERROR: ${t.error}`);
  if (t.finished === null) throw new Error("the run ended without RUN_FINISHED");
  if (t.first === null) throw new Error("the run streamed no text");
  return {
    ttft: t.first - t0,
    span: t.last - t.first,
    total: t.finished - t0,
    deltas: t.deltas,
    text: t.text,
    wall: t.wall,
    clientCpu: (cpu.user + cpu.system) / 1e6,
  };
}

async function runOnce(agent, t) {
  await agent.runAgent(
    { runId: `r-${randomUUID()}`, tools: [], context: [], forwardedProps: {} },
    {
      onEvent: ({ event }) => {
        const now = performance.now();
        switch (event.type) {
          case "TEXT_MESSAGE_CONTENT":
            t.first ??= now;
            t.last = now;
            t.deltas++;
            t.text += event.delta;
            t.wall.push(performance.timeOrigin + now);
            break;
          case "RUN_FINISHED":
            t.finished = now;
            break;
          case "RUN_ERROR":
            t.error = `${event.code ?? ""} ${event.message}`;
            break;
          default:
        }
      },
    },
  );
}

/**
 * The same run without @ag-ui/client: one POST of a RunAgentInput carrying only the new user message,
 * the SSE read by hand (split on blank lines, `data:` parsed as JSON). What the client library itself
 * costs per event is the difference to `timedRun` on the same server.
 */
export async function rawRun(url, threadId, prompt) {
  const body = {
    threadId,
    runId: `r-${randomUUID()}`,
    state: {},
    messages: [{ id: `u-${randomUUID()}`, role: "user", content: prompt }],
    tools: [],
    context: [],
    forwardedProps: {},
  };
  const t = { first: null, last: null, finished: null, deltas: 0, text: "", error: null, wall: [] };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    let i;
    while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(buf[i] === "\r" ? i + 4 : i + 2);
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""))
        .join("\n");
      if (!data) continue;
      const now = performance.now();
      const e = JSON.parse(data);
      if (e.type === "TEXT_MESSAGE_CONTENT") {
        t.first ??= now;
        t.last = now;
        t.deltas++;
        t.text += e.delta;
        t.wall.push(performance.timeOrigin + now);
      } else if (e.type === "RUN_FINISHED") t.finished = now;
      else if (e.type === "RUN_ERROR") t.error = `${e.code ?? ""} ${e.message}`;
    }
  }
  const cpu = process.cpuUsage(cpu0);
  if (t.error) throw new Error(`RUN_ERROR: ${t.error}`);
  if (t.finished === null || t.first === null) throw new Error("the raw run ended without text or RUN_FINISHED");
  return {
    ttft: t.first - t0,
    span: t.last - t.first,
    total: t.finished - t0,
    deltas: t.deltas,
    text: t.text,
    wall: t.wall,
    clientCpu: (cpu.user + cpu.system) / 1e6,
  };
}
