// The demo's one Node process: serves the built app (dist/) and the CopilotKit runtime (v2) at
// /api/copilotkit, whose only agent is an HttpAgent pointing at agent-adaptor's AG-UI route. It also
// relays the service's approval route (/api/service/v1/runs/{run}/approvals/{id}) so the page
// never needs CORS. Everything binds and talks to loopback only.
//
//   AGENT_ADAPTOR_URL=http://127.0.0.1:8080 AGENT=reference PORT=4111 node server.mjs
process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";

import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime, InMemoryAgentRunner } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "dist");
const service = (process.env.AGENT_ADAPTOR_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
const agentName = process.env.AGENT ?? "reference";
const port = Number(process.env.PORT ?? 4111);
const host = "127.0.0.1";

const runtime = new CopilotRuntime({
  agents: { default: new HttpAgent({ url: `${service}/v1/agents/${encodeURIComponent(agentName)}/agui` }) },
  runner: new InMemoryAgentRunner(),
});
const copilot = createCopilotNodeListener({ runtime, basePath: "/api/copilotkit" });

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png" };

async function serveStatic(req, res) {
  const url = new URL(req.url, "http://x");
  let file = path.normalize(path.join(dist, decodeURIComponent(url.pathname)));
  if (!file.startsWith(dist)) return send(res, 403, "forbidden");
  let info = await stat(file).catch(() => null);
  if (!info || info.isDirectory()) {
    file = path.join(dist, "index.html");
    info = await stat(file).catch(() => null);
    if (!info) return send(res, 500, "dist/ is missing: run `npm run build` first");
  }
  res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
  createReadStream(file).pipe(res);
}

// Relays a REST call to the service (approvals, threads): method, path, JSON body and status as they are.
async function relay(req, res) {
  const target = service + req.url.slice("/api/service".length);
  const chunks = [];
  for await (const c of req) chunks.push(c);
  try {
    const r = await fetch(target, {
      method: req.method,
      headers: { "content-type": req.headers["content-type"] ?? "application/json" },
      body: ["GET", "HEAD"].includes(req.method) ? undefined : Buffer.concat(chunks),
    });
    res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" });
    res.end(Buffer.from(await r.arrayBuffer()));
  } catch (e) {
    send(res, 502, JSON.stringify({ error: { code: "service_unreachable", message: String(e) } }));
  }
}

function send(res, status, body) {
  res.writeHead(status, { "content-type": "text/plain" });
  res.end(body);
}

const server = http.createServer((req, res) => {
  if (req.url.startsWith("/api/copilotkit")) return copilot(req, res);
  if (req.url.startsWith("/api/service/")) return relay(req, res);
  if (req.url === "/api/config") {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ agent: agentName, service }));
  }
  return serveStatic(req, res);
});
server.listen(port, host, () => {
  console.log(`web-demo listening on http://${host}:${server.address().port}`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)));
