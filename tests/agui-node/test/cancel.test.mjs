// Cancellation by abort: the client closes the connection mid-stream (HttpAgent.abortRun, which is
// also how CopilotKit's stop arrives); the service must cancel the run and free the thread.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { CLIENTS } from "../lib/clients.mjs";
import { startService } from "../lib/server.mjs";
import { assertClean, newAgent, run, say, text, types } from "../lib/run.mjs";

let service;
before(async () => {
  service = await startService();
});
after(async () => {
  await service?.stop();
});

for (const client of CLIENTS) {
  describe(`cancel (${client.name})`, () => {
    it("an abort mid-text ends the run on the client and the same thread runs again at once", async () => {
      const agent = newAgent(client, service.url);
      say(agent, "a slow answer please, with many words in it so that it streams for a while");
      let aborted = false;
      const t0 = Date.now();
      const r = await run(agent, {}, (event, a) => {
        if (event.type === "TEXT_MESSAGE_CONTENT" && !aborted) {
          aborted = true;
          a.abortRun();
        }
      });
      assert.ok(aborted, `never saw text to abort: ${types(r)}`);
      assert.equal(r.error, undefined, `abort must not reject: ${r.error?.stack}`);
      assert.deepEqual(r.warnings, [], "client printed warnings or errors on abort");
      assert.ok(!types(r).includes("RUN_FINISHED"), `the aborted run must not finish: ${types(r)}`);
      assert.ok(!/Reference reply: a slow answer please, with many words in it so that it streams for a while$/.test(text(r)));
      assert.ok(Date.now() - t0 < 5_000, "abort took effect promptly");

      // The service noticed the closed connection: the thread is free for the next run.
      // The cancellation may take a moment to free the thread (409 thread_busy meanwhile), never long.
      say(agent, "again");
      let r2 = await run(agent);
      for (let i = 0; i < 20 && /HTTP 409/.test(String(r2.error)); i++) {
        await new Promise((res) => setTimeout(res, 100));
        r2 = await run(agent);
      }
      assertClean(r2);
      assert.match(text(r2), /Reference reply: again/);
    });
  });
}
