// The processes under test besides the CLI itself: the mock model, `agent-adaptor serve` and the Python
// peer. Each is started on 127.0.0.1 with a free port and stopped with SIGTERM (SIGKILL after 10 s).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, writeFileSync } from "node:fs";
import path from "node:path";
import readline from "node:readline";

/** Spawns `bin args` and resolves with the capture groups of the stdout line matching each of `patterns`. */
async function startWith(name, bin, args, { env, cwd, logFile }, patterns) {
  const child = spawn(bin, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
  const log = createWriteStream(logFile);
  child.stderr.pipe(log);
  const found = new Array(patterns.length).fill(null);
  const lines = readline.createInterface({ input: child.stdout });
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: not ready within 60 s (see ${logFile})`)), 60_000);
    lines.on("line", (line) => {
      patterns.forEach((re, i) => {
        const m = found[i] === null && re.exec(line);
        if (m) found[i] = m;
      });
      if (found.every((m) => m !== null)) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited early (${code ?? signal}); see ${logFile}`));
    });
  });
  const matches = await ready;
  return {
    pid: child.pid,
    matches,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await once(child, "exit");
      clearTimeout(timer);
    },
  };
}

/**
 * `mock-model-server --deltas <n> --instant --print-env <dir>` (plus `--responses --print-codex-env` with
 * `codex`): { url, env, cwd, configDir, codex: { url, env, cwd, codexHome } | null, stop }.
 */
export async function startMock(bin, { deltas, dir, codex }) {
  const args = ["--deltas", String(deltas), "--instant", "--print-env", dir];
  const patterns = [/^claude-env (\{.*\})$/, /mock-model-server listening on (http:\/\/127\.0\.0\.1:\d+)/];
  if (codex) {
    args.push("--responses", "--print-codex-env", path.join(dir, "codex"));
    patterns.push(/^codex-env (\{.*\})$/, /mock-responses listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/);
  }
  const s = await startWith("mock-model-server", bin, args, { env: { PATH: process.env.PATH }, logFile: `${dir}.mock.log` }, patterns);
  const env = JSON.parse(s.matches[0][1]);
  let cx = null;
  if (codex) {
    const c = JSON.parse(s.matches[2][1]);
    cx = { url: s.matches[3][1], env: c.env, cwd: c.cwd, codexHome: c.codex_home };
  }
  return { url: s.matches[1][1], env: env.env, cwd: env.cwd, configDir: env.config_dir, codex: cx, pid: s.pid, stop: s.stop };
}

/** A TOML basic string: JSON's escapes are TOML's. */
const tomlString = (v) => JSON.stringify(String(v));

/**
 * `agent-adaptor serve` with its default SQLite store (a file in `dir`) and one `claude` agent on the
 * same binary, directory and environment as the CLI alone. `idleMs` is how long a thread's kept process
 * may idle (the harness lets samples end their processes between runs).
 */
export async function startAgentAdaptor(bin, { cli, codexCli, mock, dir, idleMs, timingFile }) {
  const envLines = Object.entries(mock.env).map(([k, v]) => `${k} = ${tomlString(v)}`);
  const codex = [];
  if (codexCli && mock.codex) {
    // Its own CODEX_HOME: the driver writes the provider into the config.toml of the home it owns.
    const { MOCK_API_KEY, HOME, TMPDIR, PATH, LANG, TERM, NO_COLOR } = mock.codex.env;
    const vars = { MOCK_API_KEY, HOME, TMPDIR, PATH, LANG, TERM, NO_COLOR };
    codex.push(
      "[[agents]]",
      'name = "codex"',
      'provider = "codex"',
      "[agents.config]",
      `command = ${tomlString(codexCli)}`,
      `directory = ${tomlString(mock.codex.cwd)}`,
      `codex_home = ${tomlString(path.join(dir, "codex-home-served"))}`,
      'model = "gpt-5.5"',
      `idle_timeout = ${idleMs}`,
      "[agents.config.provider]",
      'id = "mock"',
      'name = "Mock Responses"',
      `base_url = ${tomlString(mock.codex.url)}`,
      'env_key = "MOCK_API_KEY"',
      "request_max_retries = 1",
      "stream_max_retries = 1",
      "[agents.config.env]",
      ...Object.entries(vars).filter(([, v]) => v !== undefined).map(([k, v]) => `${k} = ${tomlString(v)}`),
      "",
    );
  }
  const config = [
    "[[agents]]",
    'name = "claude"',
    'provider = "claude"',
    "[agents.config]",
    `command = ${tomlString(cli)}`,
    `directory = ${tomlString(mock.cwd)}`,
    `config_dir = ${tomlString(mock.configDir)}`,
    `idle_timeout = ${idleMs}`,
    "[agents.config.env]",
    ...envLines,
    "",
    ...codex,
  ].join("\n");
  const file = path.join(dir, "serve.toml");
  writeFileSync(file, config);
  const s = await startWith(
    "agent-adaptor serve",
    bin,
    ["serve", "--config", file, "--bind", "127.0.0.1:0", "--store", `sqlite://${path.join(dir, "agent-adaptor.db")}`, "--no-discover"],
    {
      env: { PATH: process.env.PATH, HOME: dir, ...(timingFile ? { AGENT_ADAPTOR_CLAUDE_TIMING: timingFile } : {}) },
      cwd: dir,
      logFile: path.join(dir, "agent-adaptor.log"),
    },
    [/agent-adaptor listening on (http:\/\/127\.0\.0\.1:\d+)/],
  );
  const base = s.matches[0][1];
  return {
    name: "agent-adaptor",
    pid: s.pid,
    agui: `${base}/v1/agents/claude/agui`,
    codexAgui: codex.length ? `${base}/v1/agents/codex/agui` : null,
    base,
    stop: s.stop,
  };
}

/** The Python peer (`peer_server.py` in the venv), its CLI in the same offline environment. */
export async function startPeer(python, script, { cli, mock, dir }) {
  const s = await startWith(
    "ag-ui-claude-sdk",
    python,
    [script, "--cli", cli, "--cwd", mock.cwd],
    { env: { ...mock.env, PYTHONUNBUFFERED: "1" }, cwd: dir, logFile: path.join(dir, "peer.log") },
    [/peer listening on (http:\/\/127\.0\.0\.1:\d+)/],
  );
  const base = s.matches[0][1];
  return {
    name: "ag-ui-claude-sdk",
    pid: s.pid,
    agui: `${base}/agent`,
    base,
    stop: s.stop,
    release: async () => {
      const r = await fetch(`${base}/bench/release`, { method: "POST" });
      if (!r.ok) throw new Error(`peer release: HTTP ${r.status}`);
    },
  };
}
