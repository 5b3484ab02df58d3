// The console's fetch-based SSE client (crates/server/src/console/sse.js), in Node against a small SSE server
// on 127.0.0.1 that drops the first connection mid-stream: the client reconnects with `Last-Event-ID`
// set to the last id it saw, sends the API key on both requests, delivers every event once and in
// order, and stops after `done`. Also the parser on CRLF framing, multi-line data and comments.
import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const consoleDir = path.join(here, "..", "..", "crates", "server", "src", "console");

// The browser's sessionStorage, for api.js (the key the page would have stored).
const store = new Map([["agent-adaptor.console.api-key", "sse-test-key-0123456789"]]);
globalThis.sessionStorage = {
  getItem: (k) => store.get(k) ?? null,
  setItem: (k, v) => store.set(k, v),
  removeItem: (k) => store.delete(k),
};
const { follow, SseParser } = await import(pathToFileURL(path.join(consoleDir, "sse.js")).href);

const frame = (id, type, data) => `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

describe("console fetch-based SSE", () => {
  it("resumes with Last-Event-ID after a dropped connection and stops at done", async () => {
    const seen = [];
    const server = http.createServer((req, res) => {
      seen.push({ auth: req.headers.authorization, last: req.headers["last-event-id"] ?? null });
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (seen.length === 1) {
        res.write(frame(1, "run_started", { type: "run_started" }));
        res.write(frame(2, "text_delta", { type: "text_delta", text: "Hello " }));
        // Half a frame, then the connection drops: the half is never delivered.
        res.write("id: 3\nevent: text_delta\ndata: {\"type\":");
        setTimeout(() => res.socket.destroy(), 50);
      } else {
        res.write(frame(3, "text_delta", { type: "text_delta", text: "world" }));
        res.write(frame(4, "done", { type: "done", result: { text: "Hello world" } }));
        // The server keeps the stream open: the client must stop on `done` by itself.
      }
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const url = `http://127.0.0.1:${server.address().port}/v1/runs/r1/events`;
    const events = [];
    const states = [];
    await follow(url, { onEvent: (e) => events.push(e), onState: (s) => states.push(s) });
    server.closeAllConnections();
    server.close();
    assert.deepEqual(events.map((e) => [e.id, e.event]), [["1", "run_started"], ["2", "text_delta"], ["3", "text_delta"], ["4", "done"]]);
    assert.deepEqual(seen, [
      { auth: "Bearer sse-test-key-0123456789", last: null },
      { auth: "Bearer sse-test-key-0123456789", last: "2" },
    ]);
    assert.deepEqual(states, ["live", "reconnecting", "live"]);
  });

  it("rejects with the service's error on a refused request", async () => {
    const server = http.createServer((req, res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "unauthorized", message: "a valid API key is required" } }));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const url = `http://127.0.0.1:${server.address().port}/v1/runs/r1/events`;
    await assert.rejects(follow(url, { onEvent: () => {} }), (e) => e.status === 401 && e.code === "unauthorized" && e.isAuth);
    server.close();
  });

  it("parses CRLF framing, multi-line data and comments across chunk boundaries", () => {
    const p = new SseParser();
    const text = ": keep-alive\r\nid: 7\r\nevent: notice\r\ndata: line one\r\ndata: line two\r\n\r\ndata: {}\n\n";
    const out = [];
    for (const ch of text) out.push(...p.push(ch));
    assert.deepEqual(out, [
      { id: "7", event: "notice", data: "line one\nline two" },
      { id: null, event: "message", data: "{}" },
    ]);
  });
});
