// The demo: a CopilotKit (v2) chat against agent-adaptor through the CopilotKit runtime, with a
// thread picker that reopens earlier threads (the runtime replays them, the service continues them).
// `?approvals=interrupt` asks the service for AG-UI interrupts (forwardedProps.approvals): a run waiting
// for an approval ends with an interrupt that the interrupt card resumes; the default keeps the run
// streaming and answers through the service's approval route. The provider is v2's own
// `CopilotKitProvider` (not the v1 `CopilotKit` wrapper, which drops a v2 `onError` and so logs every
// failed run to the console): its `onError` puts a failed run's error into the chat (`RunErrors`).
import { CopilotChat, CopilotKitProvider, useAgent } from "@copilotkit/react-core/v2";
import { useCallback, useEffect, useState } from "react";

import { Renderers } from "./Renderers.jsx";
import { RunErrors, useRunErrors } from "./RunErrors.jsx";
import { currentThread, listThreads, openThread, rememberThread } from "./threads.js";

function ThreadPicker({ threadId, onPick }) {
  const threads = listThreads();
  return (
    <div className="threads">
      <label htmlFor="thread-picker">Thread</label>
      <select id="thread-picker" data-testid="thread-picker" value={threadId} onChange={(e) => onPick(e.target.value)}>
        {!threads.some((t) => t.id === threadId) && <option value={threadId}>New thread</option>}
        {threads.map((t) => (
          <option key={t.id} value={t.id}>
            {t.title} · {new Date(t.at).toLocaleTimeString()}
          </option>
        ))}
      </select>
      <button data-testid="new-thread" onClick={() => onPick(null)}>
        New thread
      </button>
    </div>
  );
}

// Remembers the thread under its first user message once it has one.
function ThreadMemory({ threadId, onChange }) {
  const { agent } = useAgent({ agentId: "default" });
  const first = agent.messages.find((m) => m.role === "user");
  const title = typeof first?.content === "string" ? first.content.slice(0, 40) : null;
  useEffect(() => {
    if (title && !listThreads().some((t) => t.id === threadId)) {
      rememberThread(threadId, title);
      onChange();
    }
  }, [threadId, title, onChange]);
  return null;
}

/** The approvals mode from the URL: `interrupt`, `stream` or `tool` (forwarded to the service), else none. */
function approvalsMode() {
  const mode = new URL(window.location.href).searchParams.get("approvals");
  return ["interrupt", "stream", "tool"].includes(mode) ? mode : null;
}

export function App() {
  const [threadId, setThreadId] = useState(currentThread);
  const [approvals] = useState(approvalsMode);
  const [, setVersion] = useState(0);
  useEffect(() => {
    const onPop = () => setThreadId(currentThread());
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  const bump = useCallback(() => setVersion((v) => v + 1), []);
  const [errors, onError, dismiss] = useRunErrors(threadId);
  return (
    <CopilotKitProvider
      runtimeUrl="/api/copilotkit"
      showDevConsole={false}
      enableInspector={false}
      onError={onError}
      properties={approvals ? { approvals } : undefined}
    >
      <div className="app">
        <header>
          <h1>agent-adaptor · CopilotKit</h1>
          {approvals && (
            <span className="mode" data-testid="approvals-mode">
              approvals: {approvals}
            </span>
          )}
          <ThreadPicker threadId={threadId} onPick={(id) => setThreadId(openThread(id))} />
        </header>
        <Renderers approvals={approvals} />
        <main data-testid="chat" data-thread={threadId}>
          <div className="chat">
            <CopilotChat key={threadId} agentId="default" threadId={threadId} />
          </div>
          <RunErrors errors={errors} dismiss={dismiss} />
        </main>
        <ThreadMemory threadId={threadId} onChange={bump} />
      </div>
    </CopilotKitProvider>
  );
}
