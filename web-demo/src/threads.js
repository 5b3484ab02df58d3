// The thread picker's memory: the threads this browser started, newest first, in localStorage,
// and the current one in the URL (?thread=...), so a reload resumes the same thread.
const KEY = "agent-adaptor-demo.threads";

/** Every remembered thread: `[{ id, title, at }]`, newest first. */
export function listThreads() {
  try {
    const v = JSON.parse(localStorage.getItem(KEY) ?? "[]");
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/** Remembers `id` (moving it to the front); keeps the first title it was given. */
export function rememberThread(id, title) {
  const rest = listThreads().filter((t) => t.id !== id);
  const old = listThreads().find((t) => t.id === id);
  const entry = { id, title: old?.title || title || "New thread", at: Date.now() };
  localStorage.setItem(KEY, JSON.stringify([entry, ...rest].slice(0, 50)));
}

/** The thread in the URL, or a fresh one written into the URL. */
export function currentThread() {
  const url = new URL(window.location.href);
  let id = url.searchParams.get("thread");
  if (!id) {
    id = `thread-${crypto.randomUUID()}`;
    url.searchParams.set("thread", id);
    window.history.replaceState(null, "", url);
  }
  return id;
}

/** Switches the URL to thread `id` (a fresh one when absent). */
export function openThread(id) {
  const url = new URL(window.location.href);
  url.searchParams.set("thread", id ?? `thread-${crypto.randomUUID()}`);
  window.history.pushState(null, "", url);
  return url.searchParams.get("thread");
}
