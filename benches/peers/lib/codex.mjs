// Codex alone: `codex app-server --listen stdio://` driven by hand with the frames the driver writes
// (initialize, initialized, thread/start, turn/start; benches/codex_overhead.rs does the same in Rust),
// timed like the Claude CLI: start → first `item/agentMessage/delta` → last → `turn/completed`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import readline from "node:readline";

import { treeCpuSeconds } from "./procfs.mjs";

/** The app-server's argv after the binary (the driver's default transport). */
export const APP_SERVER_ARGS = ["app-server", "--listen", "stdio://"];

const TURN_TIMEOUT_MS = 120_000;

/** A JSON-RPC peer over the app-server's stdio. */
class AppServer {
  constructor(bin, env, cwd) {
    this.child = spawn(bin, APP_SERVER_ARGS, { env, cwd, stdio: ["pipe", "pipe", "ignore"] });
    this.child.stdin.on("error", () => {});
    this.exited = once(this.child, "exit");
    this.replies = new Map();
    this.turn = null;
    this.nextId = 1;
    readline.createInterface({ input: this.child.stdout }).on("line", (line) => this.#line(line));
    this.exited.then(() => this.turn?.fail(new Error("app-server exited")));
  }

  #line(line) {
    const now = performance.now();
    let v;
    try {
      v = JSON.parse(line);
    } catch {
      return;
    }
    if (v.id !== undefined && v.method === undefined) {
      this.replies.get(v.id)?.(v);
      return;
    }
    const t = this.turn;
    if (!t) return;
    if (v.method === "item/agentMessage/delta") {
      t.first ??= now;
      t.last = now;
      t.deltas++;
      t.text += v.params?.delta ?? "";
    } else if (v.method === "turn/completed") {
      t.result = now;
      t.ok();
    }
  }

  write(frame) {
    this.child.stdin.write(`${JSON.stringify(frame)}\n`);
  }

  request(method, params) {
    const id = this.nextId++;
    const reply = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} in 60 s`)), 60_000);
      this.replies.set(id, (v) => {
        clearTimeout(timer);
        if (v.error) reject(new Error(`${method}: ${JSON.stringify(v.error)}`));
        else resolve(v.result);
      });
    });
    this.write({ id, method, params });
    return reply;
  }

  /** Starts a turn with `prompt` on `threadId`; resolves with its figures at `turn/completed`. */
  turnOn(threadId, prompt, t0) {
    const done = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no turn/completed within ${TURN_TIMEOUT_MS} ms`)), TURN_TIMEOUT_MS);
      this.turn = {
        first: null, last: null, result: null, deltas: 0, text: "",
        ok: () => {
          clearTimeout(timer);
          const t = this.turn;
          this.turn = null;
          resolve({ ttft: t.first - t0, span: t.last - t.first, total: t.result - t0, deltas: t.deltas, text: t.text });
        },
        fail: (e) => {
          clearTimeout(timer);
          this.turn = null;
          reject(e);
        },
      };
    });
    this.request("turn/start", { threadId, input: [{ type: "text", text: prompt, text_elements: [] }] }).catch((e) => this.turn?.fail(e));
    return done;
  }

  async close() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 15_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Cold (spawn, handshake, thread, first turn) then warm (a second turn on the same thread). */
export async function codexAlone(bin, env, cwd, prompt, { model = "gpt-5.5" } = {}) {
  const t0 = performance.now();
  const s = new AppServer(bin, env, cwd);
  try {
    await s.request("initialize", { clientInfo: { name: "agent-adaptor", version: "0" } });
    s.write({ method: "initialized" });
    const started = await s.request("thread/start", { cwd, model, approvalPolicy: "on-request", sandbox: "workspace-write" });
    const threadId = started.thread.id;
    const cold = await s.turnOn(threadId, prompt, t0);
    cold.cpu = treeCpuSeconds(s.child.pid);
    const warm = await s.turnOn(threadId, prompt, performance.now());
    await s.close();
    return { cold, warm, argv: [bin, ...APP_SERVER_ARGS] };
  } catch (e) {
    s.child.kill("SIGKILL");
    throw e;
  }
}
