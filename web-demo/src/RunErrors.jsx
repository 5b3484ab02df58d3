// A failed run's error in the chat: CopilotKit reports an AG-UI `RUN_ERROR` (and a run that could not
// be started or streamed) through the provider's `onError`, but shows nothing itself (it only logs to
// the console when no handler is set). `useRunErrors` keeps those errors per thread and `RunErrors`
// shows the open thread's as cards with the service's code (the run's failure reason, e.g.
// `agent_error`) and message, until dismissed. Any other CopilotKit error is still logged.
import { useCallback, useRef, useState } from "react";

/** Errors of the agent's runs that are worth showing (not a user's stop). */
const SHOWN = new Set(["agent_run_error_event", "agent_run_failed_event", "agent_run_failed"]);

/**
 * `[errors, onError, dismiss]` for the open `threadId`: that thread's errors, the provider's `onError`
 * handler, and a dismiss by error id.
 */
export function useRunErrors(threadId) {
  const [all, setAll] = useState([]);
  const thread = useRef(threadId);
  thread.current = threadId;
  const next = useRef(0);
  const onError = useCallback(({ error, code, context }) => {
    const event = context?.event;
    if (!SHOWN.has(code) || event?.code === "abort") {
      console.error(`[CopilotKit] Error (${code}):`, error, context ?? {});
      return;
    }
    const entry = {
      id: next.current++,
      thread: thread.current,
      code: event?.code ?? context?.runtimeErrorCode ?? error?.code ?? code,
      message: event?.message ?? error?.message ?? String(error),
    };
    setAll((list) => [...list, entry]);
  }, []);
  const dismiss = useCallback((id) => setAll((list) => list.filter((e) => e.id !== id)), []);
  return [all.filter((e) => e.thread === threadId), onError, dismiss];
}

/** The error cards. */
export function RunErrors({ errors, dismiss }) {
  if (errors.length === 0) return null;
  return (
    <div className="run-errors" role="alert">
      {errors.map((e) => (
        <div key={e.id} className="card run-error" data-testid="run-error" data-code={e.code}>
          <div className="card-title">
            <span className="badge err">run failed</span> {e.code}
            <button className="dismiss" aria-label="dismiss" onClick={() => dismiss(e.id)}>
              ×
            </button>
          </div>
          <div className="error">{e.message}</div>
        </div>
      ))}
    </div>
  );
}
