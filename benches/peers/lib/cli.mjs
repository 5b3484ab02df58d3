// The Claude CLI alone: the same binary, environment and mock as the servers, driven directly over its
// stream-json stdout (and stdin for the live process). Each turn is timed with the same clock as the
// AG-UI client's runs: start → first text delta → last text delta → `result`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import readline from "node:readline";
import { randomUUID } from "node:crypto";

import { reapedChildrenCpuSeconds, treeCpuSeconds } from "./procfs.mjs";

/** The driver's one-shot flags (auto-approved policy): `-p … -- <prompt>` (crates/providers/src/claude/argv.rs). */
export function oneShotArgs(prompt) {
  return [
    "-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
    "--permission-mode", "bypassPermissions", "--", prompt,
  ];
}

/** The driver's bidirectional flags under the default policy (what `serve` runs for an AG-UI run). */
export const DRIVER_BIDI_ARGS = [
  "-p", "--output-format", "stream-json", "--input-format", "stream-json",
  "--permission-prompt-tool", "stdio", "--verbose", "--include-partial-messages",
  "--permission-mode", "default",
];

/** The fewest flags that still stream text deltas from a live process (for attribution). */
export const MINIMAL_BIDI_ARGS = [
  "-p", "--output-format", "stream-json", "--input-format", "stream-json", "--verbose",
  "--include-partial-messages",
];

/** How long one turn may take before the path counts as not completed. */
const TURN_TIMEOUT_MS = 120_000;

/** The text of a `text_delta` stream event, or null. */
function textDelta(frame) {
  if (frame.type !== "stream_event") return null;
  const e = frame.event;
  if (e?.type === "content_block_delta" && e.delta?.type === "text_delta") return e.delta.text;
  return null;
}

/** A spawned CLI whose stdout is parsed line by line; turns are timed from `t0` to the `result`. */
class StreamJsonProcess {
  constructor(bin, args, { env, cwd, stdin = true }) {
    // One-shot runs get no stdin at all, as from the driver: with an open pipe the CLI waits seconds for
    // input to add to the prompt.
    this.child = spawn(bin, args, { env, cwd, stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"] });
    this.stderr = [];
    this.child.stderr.on("data", (d) => {
      if (this.stderr.length < 64) this.stderr.push(d);
    });
    this.child.stdin?.on("error", () => {});
    this.exited = once(this.child, "exit").then(([code, signal]) => ({ code, signal }));
    this.turn = null;
    this.control = new Map();
    const lines = readline.createInterface({ input: this.child.stdout });
    lines.on("line", (line) => this.#line(line));
    this.exited.then(() => this.turn?.fail(new Error(`CLI exited: ${Buffer.concat(this.stderr).toString().slice(-500)}`)));
  }

  #line(line) {
    const now = performance.now();
    let f;
    try {
      f = JSON.parse(line);
    } catch {
      return;
    }
    const t = this.turn;
    const text = textDelta(f);
    if (text !== null && t) {
      t.first ??= now;
      t.last = now;
      t.deltas++;
      t.text += text;
    } else if (f.type === "result" && t) {
      t.result = now;
      t.ok(f);
    } else if (f.type === "control_response") {
      const id = f.response?.request_id;
      this.control.get(id)?.(f);
    }
  }

  write(frame) {
    this.child.stdin.write(`${JSON.stringify(frame)}\n`);
  }

  /** Starts timing a turn at `t0`; resolves with the turn at its `result`. */
  expectTurn(t0) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no result within ${TURN_TIMEOUT_MS} ms`)), TURN_TIMEOUT_MS);
      this.turn = {
        t0, first: null, last: null, result: null, deltas: 0, text: "", clientCpu0: process.cpuUsage(),
        ok: (frame) => {
          clearTimeout(timer);
          const t = this.turn;
          this.turn = null;
          resolve({ ...t, frame });
        },
        fail: (e) => {
          clearTimeout(timer);
          this.turn = null;
          reject(e);
        },
      };
    });
  }

  /** Sends `initialize` and waits for its answer (what the driver does before the first user frame). */
  async initialize() {
    const id = `bench-init-${randomUUID()}`;
    const answered = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no initialize answer in 60 s")), 60_000);
      this.control.set(id, (f) => {
        clearTimeout(timer);
        resolve(f);
      });
      this.exited.then(() => reject(new Error(`CLI exited during initialize: ${Buffer.concat(this.stderr).toString().slice(-500)}`)));
    });
    this.write({ type: "control_request", request_id: id, request: { subtype: "initialize" } });
    return answered;
  }

  /** Writes one user message (the driver's frame shape). */
  say(text) {
    this.write({
      type: "user",
      message: { role: "user", content: text },
      parent_tool_use_id: null,
      session_id: "",
      uuid: randomUUID(),
    });
  }

  /** Closes stdin and waits for the exit. */
  async close() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 15_000);
    const r = await this.exited;
    clearTimeout(timer);
    return r;
  }
}

/** A turn's figures: time to first text, first → last text, deltas and text. */
function figures(turn) {
  const cpu = process.cpuUsage(turn.clientCpu0);
  return {
    clientCpu: (cpu.user + cpu.system) / 1e6,
    ttft: turn.first - turn.t0,
    span: turn.last - turn.first,
    total: turn.result - turn.t0,
    deltas: turn.deltas,
    text: turn.text,
  };
}

/**
 * One-shot: a process per run with the prompt on the command line. CPU is the reaped child's
 * (this process's cutime/cstime difference), so call it only while no other child of ours exits.
 */
export async function oneShot(bin, env, cwd, prompt) {
  const cpu0 = reapedChildrenCpuSeconds();
  const t0 = performance.now();
  const p = new StreamJsonProcess(bin, oneShotArgs(prompt), { env, cwd, stdin: false });
  const turn = await p.expectTurn(t0);
  const exit = await p.exited;
  if (exit.code !== 0) throw new Error(`CLI exited ${exit.code ?? exit.signal}`);
  return { ...figures(turn), cpu: reapedChildrenCpuSeconds() - cpu0 };
}

/**
 * A live stream-json process: spawn, `initialize`, the first turn (cold), then a second turn on the
 * same process (warm). CPU of the cold run is the live process tree's at its first `result`.
 * With `closeAfterCold` (the concurrent test) the process gets stdin EOF after the first turn and is not
 * waited for.
 */
export async function liveProcess(bin, args, env, cwd, prompt, { warm = true, closeAfterCold = false } = {}) {
  const t0 = performance.now();
  const p = new StreamJsonProcess(bin, args, { env, cwd });
  try {
    await p.initialize();
    const coldTurn = p.expectTurn(t0);
    p.say(prompt);
    const c = await coldTurn;
    const cold = { ...figures(c), cpu: treeCpuSeconds(p.child.pid) };
    if (closeAfterCold) {
      p.child.stdin.end();
      return { cold, exited: p.exited };
    }
    let warmFig = null;
    if (warm) {
      const t1 = performance.now();
      const warmTurn = p.expectTurn(t1);
      p.say(prompt);
      warmFig = figures(await warmTurn);
    }
    await p.close();
    return { cold, warm: warmFig, argv: [bin, ...args] };
  } catch (e) {
    p.child.kill("SIGKILL");
    throw e;
  }
}
