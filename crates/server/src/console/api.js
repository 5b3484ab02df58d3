// The service's API as the console uses it: one ROUTES table (a test checks each route against the
// OpenAPI document), the API key kept in sessionStorage (never persisted beyond the tab, never in a URL) and sent as
// `Authorization: Bearer` on every request, and typed errors with a human message for 401/403.

/** Every route the console calls, as [method, path template]. */
export const ROUTES = {
  agents: ["GET", "/v1/agents"],
  runs: ["GET", "/v1/runs"],
  threads: ["GET", "/v1/agents/{agent}/threads"],
  threadRuns: ["GET", "/v1/agents/{agent}/threads/{key}/runs"],
  startStateless: ["POST", "/v1/agents/{agent}/runs"],
  startOnThread: ["POST", "/v1/agents/{agent}/threads/{key}/runs"],
  run: ["GET", "/v1/runs/{run_id}"],
  events: ["GET", "/v1/runs/{run_id}/events"],
  cancel: ["POST", "/v1/runs/{run_id}/cancel"],
  messages: ["POST", "/v1/runs/{run_id}/messages"],
  approvals: ["GET", "/v1/runs/{run_id}/approvals"],
  decide: ["POST", "/v1/runs/{run_id}/approvals/{id}"],
};

const KEY_SLOT = "agent-adaptor.console.api-key";

/** The API key of this browser tab (sessionStorage: gone when the tab closes). */
export const apiKey = {
  get: () => sessionStorage.getItem(KEY_SLOT) ?? "",
  set: (value) => {
    if (value) sessionStorage.setItem(KEY_SLOT, value);
    else sessionStorage.removeItem(KEY_SLOT);
  },
};

/** A refused request: the HTTP status and the service's error code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }

  /** True when the key is missing, unknown or not allowed. */
  get isAuth() {
    return this.status === 401 || this.status === 403;
  }
}

/** A sentence for the user about `err` (401/403 say what to do about the key). */
export function explain(err) {
  if (err instanceof ApiError && err.status === 401) {
    return apiKey.get()
      ? "The service did not accept this API key (401 unauthorized). Check it and enter it again."
      : "This service needs an API key (401 unauthorized). Enter your key above.";
  }
  if (err instanceof ApiError && err.status === 403) {
    return `This API key is not allowed to do that (403 ${err.code}): ${err.message}`;
  }
  if (err instanceof ApiError) return `${err.code} (${err.status}): ${err.message}`;
  return String(err && err.message ? err.message : err);
}

/** The headers every request carries (the key, when one is set). */
export function authHeaders() {
  const key = apiKey.get();
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** The URL of route `name` with its path `params` filled in and `query` appended (empty values left out). */
export function url(name, params = {}, query = {}) {
  const path = ROUTES[name][1].replace(/\{(\w+)\}/g, (_, k) => encodeURIComponent(params[k]));
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

/** Turns a non-2xx response into an ApiError. */
export async function errorOf(resp) {
  const json = await resp.json().catch(() => ({}));
  const e = json && json.error ? json.error : {};
  return new ApiError(resp.status, e.code ?? `http_${resp.status}`, e.message ?? resp.statusText);
}

/** Calls route `name`; resolves with the JSON body, rejects with an ApiError. */
export async function call(name, params = {}, { body, query } = {}) {
  const init = { method: ROUTES[name][0], headers: { ...authHeaders() } };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(url(name, params, query), init);
  if (!resp.ok) throw await errorOf(resp);
  return resp.json();
}
