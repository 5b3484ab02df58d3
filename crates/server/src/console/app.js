// The console's wiring: the API-key field, the thread and run lists (by recency, filtered by the search
// box and the run-state filter), starting a run, and showing one run as a conversation that streams
// live over fetch-based SSE (or replays from the log when the run is finished).

import { ApiError, apiKey, call, explain, url } from "./api.js";
import { Conversation, h, when } from "./render.js";
import { follow } from "./sse.js";

const $ = (id) => document.getElementById(id);

const state = {
  runs: [],          // the latest GET /v1/runs page, newest first
  threads: [],       // [{ agent, key, at, state, status }] by recency
  selected: null,    // the selected thread entry
  run: null,         // the run shown
  stream: null,      // its AbortController
  conv: null,        // its Conversation
  prompts: new Map(), // run id -> the prompt this tab sent
};

function show(id, text) {
  $(id).textContent = text ?? "";
  $(id).hidden = !text;
}

/** Shows `err`: auth problems in the key banner, the rest in the status line. */
function report(err) {
  if (err instanceof ApiError && err.isAuth) {
    show("auth-msg", explain(err));
    if (err.status === 401) $("api-key").focus();
  } else {
    show("status", explain(err));
  }
}

async function loadAgents() {
  const list = await call("agents");
  const select = $("agent");
  const current = select.value;
  select.replaceChildren(...list.agents.map((a) => h("option", { value: a.name }, `${a.name} (${a.provider})`)));
  select.value = current || list.default || list.agents[0]?.name || "";
  return list.agents;
}

/** Threads by recency: the runs listing grouped by thread, plus each agent's threads without recent runs. */
async function loadThreads(agents) {
  const { runs } = await call("runs", {}, { query: { limit: 200, state: $("state-filter").value } });
  state.runs = runs;
  const byKey = new Map();
  for (const r of runs) {
    const id = `${r.agent}\u0000${r.thread_key ?? ""}`;
    if (!byKey.has(id)) byKey.set(id, { agent: r.agent, key: r.thread_key ?? null, at: r.created_at, state: r.state, runs: 0 });
    byKey.get(id).runs += 1;
  }
  if (!$("state-filter").value) {
    const lists = await Promise.all(agents.map((a) => call("threads", { agent: a.name }, { query: { limit: 200 } }).then((l) => [a.name, l.threads])));
    for (const [agent, threads] of lists) {
      for (const t of threads) {
        const id = `${agent}\u0000${t.key}`;
        const entry = byKey.get(id) ?? { agent, key: t.key, at: t.updated_at, runs: 0 };
        entry.status = t.status;
        if (entry.at < t.updated_at) entry.at = t.updated_at;
        byKey.set(id, entry);
      }
    }
  }
  state.threads = [...byKey.values()].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  renderThreads();
}

function matches(t, q) {
  if (!q) return true;
  const hay = [t.key ?? "(no thread)", t.agent, t.state, t.status].filter(Boolean).join(" ").toLowerCase();
  return q.toLowerCase().split(/\s+/).every((w) => hay.includes(w));
}

function sameThread(a, b) {
  return a && b && a.agent === b.agent && a.key === b.key;
}

function renderThreads() {
  const q = $("search").value.trim();
  const items = state.threads.filter((t) => matches(t, q)).map((t) =>
    h("li", {}, h("button", {
      type: "button",
      class: sameThread(t, state.selected) ? "item selected" : "item",
      "data-testid": "thread",
      "data-key": t.key ?? "",
      onclick: () => selectThread(t),
    }, h("span", { class: "title" }, t.key ?? "(no thread: stateless runs)"), h("span", { class: "meta" }, `${t.agent} · ${t.state ?? t.status ?? ""} · ${when(t.at)}`))),
  );
  $("threads").replaceChildren(...(items.length ? items : [h("li", { class: "muted" }, "No threads yet.")]));
}

async function selectThread(t) {
  state.selected = t;
  renderThreads();
  $("runs-title").textContent = t.key ? `Runs of ${t.key}` : "Stateless runs";
  try {
    const runs = t.key
      ? (await call("threadRuns", { agent: t.agent, key: t.key }, { query: { limit: 100, state: $("state-filter").value } })).runs
      : state.runs.filter((r) => !r.thread_key && r.agent === t.agent);
    renderRuns(runs);
  } catch (err) {
    report(err);
  }
}

function renderRuns(runs) {
  const items = runs.map((r) =>
    h("li", {}, h("button", {
      type: "button",
      class: r.run_id === state.run ? "item selected" : "item",
      "data-testid": "run",
      "data-run": r.run_id,
      "data-state": r.state,
      onclick: () => openRun(r.run_id),
    }, h("span", { class: `state ${r.state}` }, r.state), " ", h("span", { class: "meta" }, when(r.created_at)), h("code", { class: "meta" }, r.run_id))),
  );
  $("runs").replaceChildren(...(items.length ? items : [h("li", { class: "muted" }, "No runs.")]));
}

async function refresh() {
  show("status", "");
  try {
    const agents = await loadAgents();
    show("auth-msg", "");
    await loadThreads(agents);
    if (state.selected) await selectThread(state.threads.find((t) => sameThread(t, state.selected)) ?? state.selected);
  } catch (err) {
    report(err);
    if (err instanceof ApiError && err.isAuth) {
      $("threads").replaceChildren();
      $("runs").replaceChildren();
    }
  }
}

function setRunState(view) {
  $("run-state").textContent = view.state;
  $("run-state").className = `state ${view.state}`;
  const live = ["queued", "running", "parked"].includes(view.state);
  $("cancel").hidden = !live;
  $("message-form").hidden = !live;
}

/** Shows run `id`: its events, live or replayed, folded into a conversation. */
async function openRun(id) {
  state.stream?.abort();
  const ctrl = new AbortController();
  state.stream = ctrl;
  state.run = id;
  $("run-head").hidden = false;
  $("run-id").textContent = id;
  $("run-state").textContent = "";
  $("stream-state").textContent = "";
  const conv = new Conversation($("conversation"), $("raw"), {
    onDecide: (a, decision, answer) => call("decide", { run_id: id, id: a.id }, { body: answer ? { decision, answer } : { decision } }),
  });
  state.conv = conv;
  conv.prompt(state.prompts.get(id));
  try {
    setRunState(await call("run", { run_id: id }));
    await follow(url("events", { run_id: id }), {
      signal: ctrl.signal,
      onEvent: (ev) => {
        conv.apply(ev);
        // A run this tab started: list it once its thread exists.
        if (ev.event === "run_started" && state.prompts.has(id)) refresh();
      },
      onState: (s) => ($("stream-state").textContent = s === "live" ? "streaming" : "reconnecting…"),
    });
    if (ctrl.signal.aborted) return;
    $("stream-state").textContent = "";
    const view = await call("run", { run_id: id });
    setRunState(view);
    const { approvals } = await call("approvals", { run_id: id });
    for (const a of approvals) conv.approval(a);
    if (!conv.prompted) conv.promptUnknown();
    if (state.run === id) await refresh();
  } catch (err) {
    if (!ctrl.signal.aborted) report(err);
  }
}

async function start(e) {
  e.preventDefault();
  show("status", "");
  const agent = $("agent").value;
  const key = $("thread").value.trim();
  const prompt = $("prompt").value;
  if (!prompt.trim()) return show("status", "Write a prompt first.");
  try {
    const run = key
      ? await call("startOnThread", { agent, key }, { body: { prompt } })
      : await call("startStateless", { agent }, { body: { prompt } });
    state.prompts.set(run.run_id, prompt);
    state.selected = { agent, key: key || null };
    const shown = openRun(run.run_id);
    await refresh();
    await shown;
  } catch (err) {
    report(err);
  }
}

/** Sends the message box's text to the run shown (202: admitted; its delivery shows as `message` notices). */
async function sendMessage(e) {
  e.preventDefault();
  const text = $("message").value.trim();
  if (!state.run || !text) return;
  try {
    await call("messages", { run_id: state.run }, { body: { text } });
    $("message").value = "";
    state.conv?.sent(text);
  } catch (err) {
    report(err);
  }
}

function toggleRaw() {
  const open = $("raw").hidden;
  $("raw").hidden = !open;
  $("raw-toggle").setAttribute("aria-expanded", String(open));
  $("raw-toggle").textContent = open ? "Conversation only" : "Raw events";
}

$("api-key").value = apiKey.get();
$("key-form").addEventListener("submit", (e) => {
  e.preventDefault();
  apiKey.set($("api-key").value.trim());
  refresh();
});
$("composer").addEventListener("submit", start);
$("message-form").addEventListener("submit", sendMessage);
$("search").addEventListener("input", renderThreads);
$("state-filter").addEventListener("change", refresh);
$("refresh").addEventListener("click", refresh);
$("raw-toggle").addEventListener("click", toggleRaw);
$("cancel").addEventListener("click", () => state.run && call("cancel", { run_id: state.run }).catch(report));
refresh();
