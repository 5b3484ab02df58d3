// Type-checked only (`npm run typecheck`): the generated types drive the client, so a request with a
// wrong path, parameter or body, or a read of a field the answer does not have, fails to compile.
import { createClient, type components } from "../src/index.js";

export async function usage(baseUrl: string): Promise<components["schemas"]["RunView"]["state"] | undefined> {
  const client = createClient({ baseUrl, apiKey: "key" });
  const started = await client.api.POST("/v1/agents/{agent}/threads/{key}/runs", {
    params: { path: { agent: "reference", key: "docs" }, header: { "Idempotency-Key": "k1" } },
    body: { prompt: "hello" },
  });
  if (!started.data) return undefined;
  const runId: string = started.data.run_id;
  for await (const event of client.events(runId)) {
    if (event.type === "approval_request") {
      await client.api.POST("/v1/runs/{run_id}/approvals/{id}", {
        params: { path: { run_id: runId, id: event.data.id } },
        body: { decision: "approve" },
      });
    }
  }
  const run = await client.api.GET("/v1/runs/{run_id}", { params: { path: { run_id: runId } } });
  return run.data?.state;
}
