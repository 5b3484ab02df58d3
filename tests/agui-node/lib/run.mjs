// Strict runs: every event is recorded, every console warning or error the client prints during
// the run is captured, and a run only counts as clean when the client neither rejected nor warned.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

const TERMINAL = new Set(["RUN_FINISHED", "RUN_ERROR"]);

/** The AG-UI URL of `agent` on the service at `base`. */
export function aguiUrl(base, agent = "reference") {
  return `${base}/v1/agents/${agent}/agui`;
}

/** A fresh HttpAgent of `client` on a new thread (or `threadId`). */
export function newAgent(client, base, { threadId, agent } = {}) {
  return new client.HttpAgent({ url: aguiUrl(base, agent), threadId: threadId ?? `t-${randomUUID()}` });
}

/** Appends a user message to the agent's conversation. */
export function say(agent, text) {
  agent.addMessage({ id: `u-${randomUUID()}`, role: "user", content: text });
}

/**
 * Runs the agent once. Returns `{ events, error, warnings, result }`: `error` is the rejection
 * (verifier, schema, HTTP), `warnings` every console.warn/error line printed meanwhile.
 * `onEvent(event, agent)` sees each event as it arrives (e.g. to abort or approve mid-run).
 */
export async function run(agent, params = {}, onEvent) {
  const events = [];
  const warnings = [];
  const saved = { warn: console.warn, error: console.error };
  const capture = (level) => (...args) => {
    warnings.push(`${level}: ${args.map((a) => (a instanceof Error ? a.stack : typeof a === "string" ? a : JSON.stringify(a))).join(" ")}`);
  };
  console.warn = capture("warn");
  console.error = capture("error");
  let error;
  let result;
  try {
    result = await agent.runAgent(
      { runId: `r-${randomUUID()}`, tools: [], context: [], forwardedProps: {}, ...params },
      {
        onEvent: ({ event }) => {
          events.push(event);
          if (onEvent) return onEvent(event, agent);
        },
      },
    );
  } catch (e) {
    error = e;
  } finally {
    console.warn = saved.warn;
    console.error = saved.error;
  }
  return { events, error, warnings, result };
}

/** The event types of a run, in order. */
export function types(r) {
  return r.events.map((e) => e.type);
}

/**
 * Asserts a clean run: no client rejection, no warning, RUN_STARTED first, exactly one terminal
 * and it is last, of the `terminal` type.
 */
export function assertClean(r, terminal = "RUN_FINISHED") {
  assert.equal(r.error, undefined, `client rejected the run: ${r.error?.stack ?? r.error}\nevents: ${types(r).join(",")}`);
  assert.deepEqual(r.warnings, [], "client printed warnings or errors");
  const t = types(r);
  assert.equal(t[0], "RUN_STARTED", `first event: ${t.join(",")}`);
  const terminals = t.filter((x) => TERMINAL.has(x));
  assert.deepEqual(terminals, [terminal], `terminals: ${t.join(",")}`);
  assert.equal(t.at(-1), terminal, `last event: ${t.join(",")}`);
}

/** Asserts that `expected` occurs in the run's event types in this order (other events may interleave). */
export function assertInOrder(r, expected) {
  const t = types(r);
  let i = 0;
  for (const x of t) if (x === expected[i]) i++;
  assert.equal(i, expected.length, `expected ${expected.join(" < ")} in order, got ${t.join(",")}`);
}

/** The concatenated assistant text of the run's TEXT_MESSAGE_CONTENT events. */
export function text(r) {
  return r.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
}
