// The agent-adaptor client: `api` is an openapi-fetch client typed by the generated `schema.d.ts`
// (every REST operation, its parameters, bodies and answers), and `events` follows a run's events over
// SSE, resuming with `Last-Event-ID` when the connection drops, until the run's `done` event.
import createFetchClient from "openapi-fetch";

/** Creates a client of the service at `baseUrl`, sending `apiKey` (when given) as a bearer token. */
export function createClient({ baseUrl, apiKey, fetch: fetchImpl } = {}) {
  if (!baseUrl) throw new TypeError("createClient needs baseUrl");
  const base = baseUrl.replace(/\/+$/, "");
  const headers = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
  const doFetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
  const api = createFetchClient({ baseUrl: base, headers, fetch: (request) => doFetch(request) });
  return {
    api,
    events: (runId, options = {}) =>
      followEvents(`${base}/v1/runs/${encodeURIComponent(runId)}/events`, { ...options, headers, fetch: doFetch }),
  };
}

/** An error answer of the service (its JSON error body), thrown by `events`. */
export class ServiceError extends Error {
  constructor(status, body) {
    super(`${status} ${body?.error?.code ?? ""}: ${body?.error?.message ?? ""}`.trim());
    this.status = status;
    this.code = body?.error?.code;
    this.body = body;
  }
}

/** Parses SSE frames from a byte stream: `{ id, event, data }` for each frame with data. */
async function* frames(body) {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const raw = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const frame = { id: undefined, event: "message", data: [] };
      for (const line of raw.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (name === "id") frame.id = value;
        else if (name === "event") frame.event = value;
        else if (name === "data") frame.data.push(value);
      }
      if (frame.data.length) yield { id: frame.id, event: frame.event, data: frame.data.join("\n") };
    }
  }
}

/**
 * Follows a run's events from `after` (the last sequence already seen; 0 or absent: from the start):
 * yields `{ seq, type, data }` for each event (and `{ seq: undefined, type, data }` for the service's
 * notices: `lag`, `gap`, `error`), ends after `done`. A dropped connection is resumed with the last
 * sequence as `Last-Event-ID` (at most `retries` times in a row, `retryDelayMs` apart), so no event
 * is lost or repeated. An error answer throws a `ServiceError`.
 */
export async function* followEvents(url, { after, signal, headers = {}, fetch: doFetch, retries = 5, retryDelayMs = 200 } = {}) {
  let last = after ?? 0;
  let failures = 0;
  for (;;) {
    const request = { headers: { ...headers, Accept: "text/event-stream" }, signal };
    if (last > 0) request.headers["Last-Event-ID"] = String(last);
    let response;
    try {
      response = await (doFetch ?? globalThis.fetch)(url, request);
    } catch (error) {
      if (signal?.aborted || ++failures > retries) throw error;
      await new Promise((r) => setTimeout(r, retryDelayMs));
      continue;
    }
    if (!response.ok) {
      const body = await response.json().catch(() => undefined);
      throw new ServiceError(response.status, body);
    }
    try {
      for await (const frame of frames(response.body)) {
        failures = 0;
        const seq = frame.id === undefined ? undefined : Number(frame.id);
        if (seq !== undefined) last = seq;
        yield { seq, type: frame.event, data: JSON.parse(frame.data) };
        if (frame.event === "done") return;
      }
    } catch (error) {
      if (signal?.aborted) throw error;
    }
    if (signal?.aborted) return;
    if (++failures > retries) throw new Error(`the event stream of ${url} kept dropping`);
    await new Promise((r) => setTimeout(r, retryDelayMs));
  }
}
