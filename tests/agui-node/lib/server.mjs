// Where the agent-adaptor service is: AGENT_ADAPTOR_URL when set, otherwise a fresh
// `agent-adaptor serve --bind 127.0.0.1:0` spawned from AGENT_ADAPTOR_BIN. Neither set is a
// failure, never a skip: the suite exists to prove the server against the real clients.
import { spawn } from "node:child_process";
import { once } from "node:events";
import readline from "node:readline";

const LISTEN = /agent-adaptor listening on (http:\/\/127\.0\.0\.1:\d+)/;

/** Starts (or locates) the service; returns `{ url, stop() }`. */
export async function startService() {
  if (process.env.AGENT_ADAPTOR_URL) {
    const url = process.env.AGENT_ADAPTOR_URL.replace(/\/+$/, "");
    if (!/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(url + "/")) {
      throw new Error(`AGENT_ADAPTOR_URL must point at loopback, got ${url}`);
    }
    return { url, stop: async () => {} };
  }
  const bin = process.env.AGENT_ADAPTOR_BIN;
  if (!bin) {
    throw new Error("set AGENT_ADAPTOR_URL (a running service) or AGENT_ADAPTOR_BIN (the agent-adaptor binary)");
  }
  const child = spawn(bin, ["serve", "--bind", "127.0.0.1:0"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? "warn" },
  });
  const stderr = [];
  child.stderr.on("data", (d) => stderr.push(d));
  const lines = readline.createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 30 s; stderr:\n${Buffer.concat(stderr)}`)), 30_000);
    lines.on("line", (line) => {
      const m = LISTEN.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`agent-adaptor serve exited early (${code}); stderr:\n${Buffer.concat(stderr)}`));
    });
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await once(child, "exit");
      clearTimeout(timer);
    },
  };
}
