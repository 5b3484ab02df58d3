// The demo's interrupt card in headless Debian chromium (built-in `reference` agent): with
// `?approvals=interrupt` the page forwards `forwardedProps.approvals = "interrupt"`, so a run that needs
// a permission ends with an AG-UI interrupt outcome; CopilotKit's `useInterrupt` shows the card, and
// approving it sends `resume[]`, which continues the SAME execution of the service (its run record ends
// succeeded with the approved tool's result). Screenshots: 10-interrupt, 11-interrupt-resumed.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { assertNoProblems, send, serviceRun, waitForText, waitIdle } from "./chat.mjs";
import { openBrowser, shot, startDemo, startService } from "./harness.mjs";

let service;
let demo;
let browser;
let page;
let problems;

before(async () => {
  service = await startService();
  demo = await startDemo(service.url);
  ({ browser, page, problems } = await openBrowser());
  await page.goto(`${demo.url}/?approvals=interrupt`);
  await page.getByTestId("copilot-chat-textarea").waitFor();
});

after(async () => {
  await browser?.close();
  await demo?.stop();
  await service?.stop();
});

describe("web demo interrupt card in chromium (reference agent)", () => {
  it("ends the run with an interrupt, and approving the card resumes the same execution", async () => {
    assert.equal(await page.getByTestId("approvals-mode").innerText(), "approvals: interrupt");
    const prompt = "please ask permission to write the notes";
    await send(page, prompt);

    const card = page.getByTestId("interrupt");
    await card.getByTestId("interrupt-approve").waitFor();
    assert.equal(await card.getAttribute("data-reason"), "tool_call");
    assert.match(await card.innerText(), /write_file/);
    // The run has ended (the chat is idle) while the execution waits for the answer.
    await waitIdle(page);
    const runId = await card.getAttribute("data-run");
    assert.ok(runId, "the interrupt names the service run");
    const waiting = await serviceRun(page, runId);
    assert.notEqual(waiting.state, "succeeded", JSON.stringify(waiting));
    // The decision call is shown, but only the interrupt card answers it.
    assert.equal(await page.getByTestId("approval").getByTestId("approve").count(), 0);
    await shot(page, "10-interrupt");

    await card.getByTestId("interrupt-approve").click();
    const write = page.locator('[data-testid="tool-call"][data-tool="write_file"]').last();
    await write.getByTestId("tool-result").waitFor();
    assert.match(await write.getByTestId("tool-result").innerText(), /wrote 5 bytes to notes\.txt/);
    await waitForText(page, `Reference reply: ${prompt}`);
    await waitIdle(page);
    await page.getByTestId("interrupt").waitFor({ state: "detached" });

    // Same execution: the run that raised the interrupt is the one that finished, with the approval.
    const run = await serviceRun(page, runId);
    assert.equal(run.state, "succeeded", JSON.stringify(run));
    assert.match(run.result.text, /approved/);
    await shot(page, "11-interrupt-resumed");
    assertNoProblems(problems);
  });
});
