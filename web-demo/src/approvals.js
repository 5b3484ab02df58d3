// Answers a pending approval of the service (permission, question, plan review) through the demo
// server's relay of `POST /v1/runs/{run_id}/approvals/{id}`.

/**
 * Posts `decision` for the approval request `requestId` of run `runId`.
 * Resolves to the service's JSON answer; rejects with its error message on a non-2xx status.
 */
export async function decide(runId, requestId, decision) {
  const url = `/api/service/v1/runs/${encodeURIComponent(runId)}/approvals/${encodeURIComponent(requestId)}`;
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(decision),
  });
  const body = await res.text();
  if (!res.ok) throw new Error(`approval refused (${res.status}): ${body}`);
  return body ? JSON.parse(body) : {};
}
