// How the chat renders what the agent does: backend tool calls as cards, the service's approval
// requests (tool calls named `dec.<kind>`) as approve/deny and question UIs, and AG-UI interrupts.
// In interrupt mode the decision calls are only shown; the interrupt card answers them.
import { useDefaultRenderTool, useInterrupt, useRenderTool } from "@copilotkit/react-core/v2";
import { useState } from "react";
import { z } from "zod";

import { decide } from "./approvals.js";

const Decision = z
  .object({
    request_id: z.string(),
    kind: z.string(),
    prompt: z.string(),
    run_id: z.string().optional(),
    choices: z.array(z.object({ key: z.string(), label: z.string() }).passthrough()).optional(),
  })
  .passthrough();

function pretty(v) {
  if (typeof v !== "string") return JSON.stringify(v, null, 2);
  try {
    return JSON.stringify(JSON.parse(v), null, 2);
  } catch {
    return v;
  }
}

/** A backend tool call: name, arguments and (when done) its result. */
function ToolCard({ name, parameters, status, result }) {
  return (
    <div className="card tool" data-testid="tool-call" data-tool={name} data-status={status}>
      <div className="card-title">
        <span className="badge">tool</span> {name} <span className="status">{status}</span>
      </div>
      <pre className="args">{pretty(parameters ?? {})}</pre>
      {status === "complete" && (
        <pre className="result" data-testid="tool-result">
          {pretty(result ?? "")}
        </pre>
      )}
    </div>
  );
}

function useDecision(parameters) {
  const [state, setState] = useState({ busy: false, error: null, done: null });
  const send = async (decision, label) => {
    setState({ busy: true, error: null, done: null });
    try {
      await decide(parameters.run_id, parameters.request_id, decision);
      setState({ busy: false, error: null, done: label });
    } catch (e) {
      setState({ busy: false, error: String(e.message ?? e), done: null });
    }
  };
  return [state, send];
}

/** A permission request: Approve / Deny while the run waits for it (shown only, with `viaInterrupt`). */
function ApprovalCard({ parameters, status, result, viaInterrupt }) {
  const [state, send] = useDecision(parameters);
  const answered = status === "complete" || state.done || viaInterrupt;
  return (
    <div className="card approval" data-testid="approval" data-status={status}>
      <div className="card-title">
        <span className="badge warn">permission</span> {parameters.prompt}
      </div>
      {!answered && (
        <div className="actions">
          <button data-testid="approve" disabled={state.busy} onClick={() => send({ decision: "approve" }, "approved")}>
            Approve
          </button>
          <button data-testid="deny" disabled={state.busy} onClick={() => send({ decision: "deny" }, "denied")}>
            Deny
          </button>
        </div>
      )}
      {viaInterrupt && status !== "complete" && <div className="note">Answer it in the interrupt card.</div>}
      {state.done && <div className="note">You {state.done} this.</div>}
      {status === "complete" && <pre className="result">{pretty(result ?? "")}</pre>}
      {state.error && <div className="error">{state.error}</div>}
    </div>
  );
}

/** A question with choices (and a free-text answer); shown only, with `viaInterrupt`. */
function QuestionCard({ parameters, status, result, viaInterrupt }) {
  const [state, send] = useDecision(parameters);
  const [free, setFree] = useState("");
  const answered = status === "complete" || state.done || viaInterrupt;
  return (
    <div className="card question" data-testid="question" data-status={status} data-run={parameters.run_id}>
      <div className="card-title">
        <span className="badge">question</span> {parameters.prompt}
      </div>
      {!answered && (
        <div className="actions">
          {(parameters.choices ?? []).map((c) => (
            <button
              key={c.key}
              data-testid={`choice-${c.key}`}
              disabled={state.busy}
              onClick={() => send({ decision: "answer", answer: c.key }, `answered ${c.label}`)}
            >
              {c.label}
            </button>
          ))}
          <input placeholder="or type an answer" value={free} onChange={(e) => setFree(e.target.value)} />
          <button disabled={state.busy || !free} onClick={() => send({ decision: "answer", answer: free }, `answered ${free}`)}>
            Send
          </button>
        </div>
      )}
      {state.done && <div className="note">You {state.done}.</div>}
      {status === "complete" && <pre className="result">{pretty(result ?? "")}</pre>}
      {state.error && <div className="error">{state.error}</div>}
    </div>
  );
}

/**
 * An AG-UI interrupt (the run ended waiting for an answer): approve / deny, or pick a choice for a
 * question (`reason: input_required`). Answering starts the resume run on the same thread.
 */
function InterruptCard({ interrupt, resolve, cancel }) {
  const [busy, setBusy] = useState(false);
  if (!interrupt) return null;
  const meta = interrupt.metadata ?? {};
  const answer = (payload) => {
    setBusy(true);
    resolve(payload, interrupt.id);
  };
  return (
    <div
      className="card interrupt"
      data-testid="interrupt"
      data-reason={interrupt.reason}
      data-run={meta.run_id}
      data-interrupt={interrupt.id}
    >
      <div className="card-title">
        <span className="badge warn">interrupt · {interrupt.reason}</span> {interrupt.message ?? "The agent is waiting for you"}
      </div>
      <div className="actions">
        {interrupt.reason === "input_required" ? (
          (meta.choices ?? []).map((c) => (
            <button key={c.key} data-testid={`interrupt-choice-${c.key}`} disabled={busy} onClick={() => answer({ answer: c.key })}>
              {c.label}
            </button>
          ))
        ) : (
          <button data-testid="interrupt-approve" disabled={busy} onClick={() => answer({ approved: true })}>
            Approve
          </button>
        )}
        <button
          data-testid="interrupt-deny"
          disabled={busy}
          onClick={() => {
            setBusy(true);
            cancel(interrupt.id);
          }}
        >
          Deny
        </button>
      </div>
    </div>
  );
}

/** Registers every renderer; render it once inside the CopilotKit provider. */
export function Renderers({ approvals }) {
  const viaInterrupt = approvals === "interrupt";
  useDefaultRenderTool({ render: (props) => <ToolCard {...props} /> });
  useRenderTool({
    name: "dec.permission",
    parameters: Decision,
    render: (props) => <ApprovalCard {...props} viaInterrupt={viaInterrupt} />,
  });
  useRenderTool({
    name: "dec.plan_review",
    parameters: Decision,
    render: (props) => <ApprovalCard {...props} viaInterrupt={viaInterrupt} />,
  });
  useRenderTool({
    name: "dec.question",
    parameters: Decision,
    render: (props) => <QuestionCard {...props} viaInterrupt={viaInterrupt} />,
  });
  useInterrupt({ render: (props) => <InterruptCard {...props} /> });
  return null;
}
