// The e2e harness: the service (AGENT_ADAPTOR_URL, or `agent-adaptor serve` spawned from
// AGENT_ADAPTOR_BIN on a free port), the demo server on a free port, and Debian's chromium driven by
// playwright-core (CHROMIUM_BIN, default /usr/bin/chromium; never a downloaded browser). Every
// console error, page error and request leaving 127.0.0.1 is recorded so tests can fail on them.
// For the real Claude CLI: the mock Anthropic model as a process (`mock-model-server`, next to the
// service binary) that writes the service's config file for a `claude` agent.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
export const demoDir = path.dirname(here);
/** Where screenshots go (git-ignored). */
export const artifacts = process.env.WEB_DEMO_ARTIFACTS ?? path.join(demoDir, "..", "artifacts", "web-demo");

/** Spawns `cmd args` and waits for a stdout line matching `pattern`; returns `{ url, stop, output }`. */
async function spawnListening(cmd, args, pattern, env) {
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  const output = [];
  child.stderr.on("data", (d) => output.push(String(d)));
  const lines = readline.createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd}: no listening line in 60 s:\n${output.join("")}`)), 60_000);
    lines.on("line", (line) => {
      output.push(line + "\n");
      const m = pattern.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited early (${code}):\n${output.join("")}`));
    });
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await once(child, "exit");
    clearTimeout(timer);
  };
  return { url, stop, output, child };
}

/**
 * The service: an existing one (AGENT_ADAPTOR_URL, unless `config` is given) or a fresh
 * `agent-adaptor serve` on port 0, with `--config <config>` when given.
 */
export async function startService(config) {
  if (process.env.AGENT_ADAPTOR_URL && !config) {
    return { url: process.env.AGENT_ADAPTOR_URL.replace(/\/+$/, ""), stop: async () => {} };
  }
  const bin = process.env.AGENT_ADAPTOR_BIN;
  if (!bin) throw new Error("set AGENT_ADAPTOR_URL (a running service) or AGENT_ADAPTOR_BIN (the agent-adaptor binary)");
  const args = ["serve", "--bind", "127.0.0.1:0", ...(config ? ["--config", config] : [])];
  return spawnListening(bin, args, /agent-adaptor listening on (http:\/\/127\.0\.0\.1:\d+)/, {
    RUST_LOG: process.env.RUST_LOG ?? "warn",
  });
}

/** The mock model binary: MOCK_MODEL_SERVER_BIN, else `mock-model-server` next to AGENT_ADAPTOR_BIN. */
function mockModelBin() {
  if (process.env.MOCK_MODEL_SERVER_BIN) return process.env.MOCK_MODEL_SERVER_BIN;
  const bin = process.env.AGENT_ADAPTOR_BIN;
  return bin ? path.join(path.dirname(bin), "mock-model-server") : null;
}

/**
 * Why the real-Claude tier cannot run here (no CLI, no mock binary), or null when it can. The CLI is
 * AGENT_ADAPTOR_CLAUDE_BIN (`eval "$(scripts/install-clis.sh --env)"`).
 */
export function claudeMissing() {
  const cli = process.env.AGENT_ADAPTOR_CLAUDE_BIN;
  if (!cli) return "AGENT_ADAPTOR_CLAUDE_BIN is not set (eval \"$(scripts/install-clis.sh --env)\")";
  if (!existsSync(cli)) return `AGENT_ADAPTOR_CLAUDE_BIN=${cli} does not exist`;
  const mock = mockModelBin();
  if (!mock || !existsSync(mock)) return `no mock-model-server binary (${mock ?? "set AGENT_ADAPTOR_BIN"}): cargo build --bins`;
  return null;
}

/**
 * The mock Anthropic model (`mock-model-server`) on 127.0.0.1 plus a service config file for a `claude`
 * agent running the real CLI offline against it, in a fresh temp dir. `requests()` lists every request
 * the mock saw (`{ n, method, path }`); `project` is the CLI's project directory (testkit::claude_env's
 * `proj/`); `stop` also removes the temp dir.
 */
export async function startMockModel() {
  const root = mkdtempSync(path.join(os.tmpdir(), "web-demo-claude-"));
  const config = path.join(root, "serve.toml");
  const mock = await spawnListening(
    mockModelBin(),
    ["--serve-config", config, "--root", path.join(root, "env")],
    /mock-model-server listening on (http:\/\/127\.0\.0\.1:\d+)/,
    {},
  );
  return {
    url: mock.url,
    config,
    root,
    project: path.join(root, "env", "proj"),
    output: mock.output,
    requests: () =>
      mock.output.flatMap((line) => {
        const m = /^request (\d+) (\S+) (\S+)/.exec(line);
        return m ? [{ n: Number(m[1]), method: m[2], path: m[3] }] : [];
      }),
    stop: async () => {
      await mock.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The demo server (dist/ must be built) in front of the service at `serviceUrl`. */
export async function startDemo(serviceUrl, agent = "reference") {
  if (!existsSync(path.join(demoDir, "dist", "index.html"))) throw new Error("web-demo/dist is missing: run `npm run build`");
  return spawnListening(process.execPath, [path.join(demoDir, "server.mjs")], /web-demo listening on (http:\/\/127\.0\.0\.1:\d+)/, {
    AGENT_ADAPTOR_URL: serviceUrl,
    AGENT: agent,
    PORT: "0",
  });
}

/** Headless Debian chromium with a page that records problems into `problems`. */
export async function openBrowser() {
  const executablePath = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";
  if (!existsSync(executablePath)) throw new Error(`no chromium at ${executablePath} (apt-get install -y chromium)`);
  const browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  const context = await browser.newContext({ viewport: { width: 1100, height: 820 } });
  const problems = [];
  context.on("request", (r) => {
    const u = new URL(r.url());
    if (!["127.0.0.1", "localhost"].includes(u.hostname) && !["data:", "blob:"].includes(u.protocol)) {
      problems.push(`request off loopback: ${r.url()}`);
    }
  });
  await context.route(/^https?:\/\/(?!127\.0\.0\.1[:/]|localhost[:/])/, (route) => route.abort());
  const page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console.error: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.stack ?? e}`));
  mkdirSync(artifacts, { recursive: true });
  return { browser, page, problems };
}

/** Saves a screenshot `name`.png under the artifacts dir. */
export async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: false });
}
