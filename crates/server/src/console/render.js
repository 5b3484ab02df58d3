// Rendering: a run's events folded into a conversation (user prompt, assistant messages, reasoning
// collapsed, tool cards, approvals with their outcomes, notices, errors) plus the raw event records.
// Everything from the server is set as text (textContent / text nodes), never parsed as HTML.

/** Makes an element: `props` are attributes (`class`, `data-*`, ...) or `on*` handlers; strings become text. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false).map((c) => (c instanceof Node ? c : String(c))));
  return el;
}

/** JSON for display. */
export const pretty = (v) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

/** A local time for an RFC 3339 stamp. */
export const when = (t) => (t ? new Date(t).toLocaleString() : "");

/** One run as a conversation in `root`, and its raw events in `raw`. */
export class Conversation {
  /** `onDecide(approval, decision, answer)` answers an approval; it resolves or throws. */
  constructor(root, raw, { onDecide }) {
    this.root = root;
    this.raw = raw;
    this.onDecide = onDecide;
    root.replaceChildren();
    raw.replaceChildren();
    this.messages = new Map();
    this.reasoning = new Map();
    this.tools = new Map();
    this.approvals = new Map();
    this.prompted = false;
    this.answered = false;
  }

  add(node) {
    this.root.append(node);
    return node;
  }

  /** The user's prompt, when known. */
  prompt(text) {
    if (this.prompted || !text) return;
    this.prompted = true;
    this.root.prepend(h("div", { class: "msg user", "data-testid": "user-message" }, h("div", { class: "who" }, "You"), h("div", { class: "body" }, text)));
  }

  /** A supplemental message sent to the run from this tab. */
  sent(text) {
    this.add(h("div", { class: "msg user", "data-testid": "sent-message" }, h("div", { class: "who" }, "You (message)"), h("div", { class: "body" }, text)));
  }

  /** A note that the prompt is not in the run's events. */
  promptUnknown() {
    if (this.prompted) return;
    this.prompted = true;
    this.root.prepend(h("div", { class: "msg user muted" }, "(the prompt is not in this run's events: the agent's exposure policy leaves out the transcript)"));
  }

  /** One SSE event `{ id, event, data }` (data as text). */
  apply({ id, event, data }) {
    let ev = {};
    try {
      ev = JSON.parse(data);
    } catch (_) {
      ev = { type: event, text: data };
    }
    this.raw.append(h("pre", { class: "raw-event", "data-testid": "raw-event", "data-type": event }, `${id ?? "-"} ${event} ${data}`));
    const fold = FOLD[ev.type ?? event];
    if (fold) fold(this, ev);
  }

  message(ev) {
    let m = this.messages.get(ev.message_id);
    if (!m) {
      const user = ev.role === "user";
      const body = h("div", { class: "body" });
      const node = this.add(h("div", { class: `msg ${user ? "user" : "assistant"}`, "data-testid": user ? "user-message" : "assistant-message" }, h("div", { class: "who" }, user ? "You" : "Assistant"), body));
      m = { node, body };
      this.messages.set(ev.message_id, m);
      if (user) this.prompted = true;
      else this.answered = true;
    }
    if (ev.text) m.body.append(ev.text);
  }

  thinking(ev) {
    let r = this.reasoning.get(ev.message_id);
    if (!r) {
      const body = h("div", { class: "body" });
      this.add(h("details", { class: "reasoning", "data-testid": "reasoning" }, h("summary", {}, "Reasoning"), body));
      r = { body };
      this.reasoning.set(ev.message_id, r);
    }
    if (ev.text) r.body.append(ev.text);
  }

  tool(id) {
    let t = this.tools.get(id);
    if (!t) {
      const name = h("span", { class: "tool-name", "data-testid": "tool-name" });
      const status = h("span", { class: "status", "data-testid": "tool-status" }, "running");
      const input = h("pre", { class: "tool-input", "data-testid": "tool-input" });
      const output = h("pre", { class: "tool-output", "data-testid": "tool-output" });
      const node = this.add(h("div", { class: "card tool", "data-testid": "tool-card", "data-status": "running" }, h("div", { class: "head" }, "Tool ", name, " ", status), h("div", { class: "label" }, "Input"), input, h("div", { class: "label" }, "Output"), output));
      t = { node, name, status, input, output, args: "" };
      this.tools.set(id, t);
    }
    return t;
  }

  toolCall(ev) {
    const t = this.tool(ev.id);
    if (ev.name) {
      t.name.textContent = ev.name;
      t.node.setAttribute("data-tool", ev.name);
    }
    if (ev.args_delta) {
      t.args += ev.args_delta;
      t.input.textContent = t.args;
    }
    if (ev.args !== undefined) t.input.textContent = pretty(ev.args);
  }

  toolResult(ev) {
    const t = this.tool(ev.id);
    const failed = Boolean(ev.is_error || ev.error);
    t.output.textContent = pretty(ev.result ?? ev.error ?? ev.content ?? "");
    this.toolStatus(t, failed ? "error" : "complete");
  }

  toolStatus(t, status) {
    t.status.textContent = status;
    t.node.setAttribute("data-status", status);
  }

  /** An approval request (from an event or the approvals listing); pending ones get buttons. */
  approval(a) {
    let card = this.approvals.get(a.id);
    if (!card) {
      const outcome = h("span", { class: "status", "data-testid": "approval-outcome" }, "pending");
      const actions = h("div", { class: "actions" });
      const node = this.add(h("div", { class: "card approval", "data-testid": "approval", "data-kind": a.kind, "data-outcome": "pending" }, h("div", { class: "head" }, `Approval (${a.kind}) `, outcome), h("div", { class: "body" }, a.title ?? ""), actions));
      card = { node, outcome, actions, a };
      this.approvals.set(a.id, card);
      this.buttons(card);
    }
    if (a.outcome) this.outcome(a.id, a.outcome);
    else if (a.pending === false) this.outcome(a.id, "resolved");
  }

  buttons(card) {
    const { a } = card;
    const answer = (decision, extra) => async () => {
      for (const b of card.actions.querySelectorAll("button")) b.disabled = true;
      try {
        await this.onDecide(a, decision, extra);
        card.outcome.textContent = "answer sent";
      } catch (err) {
        card.actions.append(h("span", { class: "error-text" }, String(err.message ?? err)));
        for (const b of card.actions.querySelectorAll("button")) b.disabled = false;
      }
    };
    if (a.kind === "question" && Array.isArray(a.choices) && a.choices.length) {
      for (const c of a.choices) card.actions.append(h("button", { onclick: answer("answer", c.key) }, c.label || c.key));
    } else {
      card.actions.append(h("button", { class: "approve", "data-testid": "approve", onclick: answer("approve") }, "Approve"));
    }
    card.actions.append(h("button", { class: "deny", "data-testid": "deny", onclick: answer("deny") }, "Deny"));
  }

  /** Marks approval `id` as ended with `outcome` (approved, denied, answered, expired, cancelled). */
  outcome(id, outcome) {
    const card = this.approvals.get(id);
    if (!card) return;
    card.outcome.textContent = outcome;
    card.node.setAttribute("data-outcome", outcome);
    card.actions.replaceChildren();
  }

  notice(ev) {
    const kind = ev.kind ?? "notice";
    if (kind === "approval.resolved" && ev.data?.request_id) return this.outcome(ev.data.request_id, ev.data.outcome ?? "resolved");
    if (kind === "approval.requested") return;
    if (kind === "transcript.item") {
      if (ev.data?.kind === "user" && ev.data.text) this.prompt(ev.data.text);
      return;
    }
    this.add(h("div", { class: "notice", "data-testid": "notice", "data-kind": kind }, h("span", { class: "kind" }, kind), " ", ev.text ?? "", ev.data && Object.keys(ev.data).length ? h("code", {}, " ", JSON.stringify(ev.data)) : null));
  }

  error(err, label = "Error") {
    if (!err) return;
    this.add(h("div", { class: "card error", "data-testid": "run-error", "data-code": err.code ?? "" }, h("div", { class: "head" }, `${label}: `, err.code ?? "error"), h("div", { class: "body" }, err.message ?? "")));
  }

  done(ev) {
    for (const t of this.tools.values()) if (t.node.getAttribute("data-status") === "running") this.toolStatus(t, "no result");
    if (ev.error) this.error(ev.error, "Run failed");
    else if (!this.answered && ev.result?.text) this.message({ message_id: "result", text: ev.result.text });
  }
}

const FOLD = {
  text_delta: (c, ev) => c.message(ev),
  thinking: (c, ev) => c.thinking(ev),
  tool_call: (c, ev) => c.toolCall(ev),
  tool_result: (c, ev) => c.toolResult(ev),
  approval_request: (c, ev) => c.approval(ev),
  notice: (c, ev) => c.notice(ev),
  message_update: (c, ev) => c.notice({ kind: "message", text: `${ev.id ?? ""} ${ev.state ?? ""}`.trim() }),
  dropped: (c, ev) => c.notice({ kind: "dropped", text: `${ev.count} events dropped (${ev.reason})` }),
  subagent_update: (c, ev) => c.notice({ kind: "subagent", text: ev.text ?? ev.kind ?? "" }),
  done: (c, ev) => c.done(ev),
};
