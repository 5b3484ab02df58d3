// Server-sent events over fetch (EventSource cannot send an Authorization header): reads the response
// body as a stream, parses `id:` / `event:` / `data:` lines into events, and on a dropped connection
// reconnects with `Last-Event-ID` (the last id seen), so nothing is missed or repeated. Ends after `done`.

import { authHeaders, errorOf } from "./api.js";

/** Parses SSE text incrementally: feed chunks, get complete events `{ id, event, data }`. */
export class SseParser {
  constructor() {
    this.buffer = "";
    this.reset();
  }

  reset() {
    this.id = null;
    this.event = "";
    this.data = [];
  }

  /** Adds `chunk`; returns the events it completed. */
  push(chunk) {
    this.buffer += chunk;
    const out = [];
    let nl;
    while ((nl = this.buffer.search(/\r\n|\n|\r/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      const width = this.buffer.startsWith("\r\n", nl) ? 2 : 1;
      // A lone CR at the end may be the first half of CRLF: wait for more.
      if (width === 1 && this.buffer[nl] === "\r" && nl === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(nl + width);
      if (line === "") {
        if (this.data.length) out.push({ id: this.id, event: this.event || "message", data: this.data.join("\n") });
        this.reset();
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "id") this.id = value;
      else if (field === "event") this.event = value;
      else if (field === "data") this.data.push(value);
    }
    return out;
  }
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Follows the SSE stream at `url` until a `done` event (or `signal` aborts), calling `onEvent({ id,
 * event, data })` for each. Reconnects after a dropped connection with `Last-Event-ID`; an HTTP error
 * (401, 404, ...) rejects with an ApiError. `onState("live" | "reconnecting")` reports the connection.
 */
export async function follow(url, { onEvent, onState = () => {}, signal } = {}) {
  let lastId = "";
  let delay = 250;
  while (!signal?.aborted) {
    let resp;
    try {
      const headers = { accept: "text/event-stream", ...authHeaders() };
      if (lastId) headers["last-event-id"] = lastId;
      resp = await fetch(url, { headers, signal, cache: "no-store" });
    } catch (err) {
      if (signal?.aborted) return;
      onState("reconnecting");
      await sleep(delay, signal);
      delay = Math.min(delay * 2, 5000);
      continue;
    }
    if (!resp.ok) throw await errorOf(resp);
    onState("live");
    delay = 250;
    const parser = new SseParser();
    const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const ev of parser.push(value)) {
          if (ev.id) lastId = ev.id;
          onEvent(ev);
          if (ev.event === "done") {
            reader.cancel().catch(() => {});
            return;
          }
        }
      }
    } catch (err) {
      if (signal?.aborted) return;
    }
    onState("reconnecting");
    await sleep(delay, signal);
  }
}
