// Several turns on one thread in headless chromium (reference agent): every turn's backend tool call
// shows as its own card (AG-UI tool call ids are unique per run on a thread, so CopilotKit does not fold
// the second turn's call into the first's), and a run that fails shows its error in the chat, after
// which the thread takes the next turn. Any console error, page error or request off loopback fails.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import * as chatKit from "./chat.mjs";
import { openBrowser, shot, startDemo, startService } from "./harness.mjs";

let service;
let demo;
let browser;
let page;
let problems;

const chat = () => page.getByTestId("chat");
const echoCards = () => chat().locator('[data-testid="tool-call"][data-tool="echo"]');

before(async () => {
  service = await startService();
  demo = await startDemo(service.url);
  ({ browser, page, problems } = await openBrowser());
  await page.goto(demo.url);
  await page.getByTestId("copilot-chat-textarea").waitFor();
});

after(async () => {
  await browser?.close();
  await demo?.stop();
  await service?.stop();
});

/** Sends `prompt` and waits for its reply and for the chat to be idle again. */
async function turn(prompt) {
  await chatKit.send(page, prompt);
  await chatKit.waitForText(page, `Reference reply: ${prompt}`);
  await chatKit.waitIdle(page);
}

describe("web demo: turns on one thread (reference agent)", () => {
  it("shows the tool card of every turn, each with its own result", async () => {
    await turn("first turn alpha");
    await turn("second turn beta");
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="chat"] [data-testid="tool-call"][data-tool="echo"]').length >= 2,
      null,
      { timeout: 10_000 },
    ).catch(() => {});
    const cards = echoCards();
    assert.equal(await cards.count(), 2, "one echo card per turn");
    const results = [];
    for (let i = 0; i < 2; i++) {
      const card = cards.nth(i);
      assert.ok(await card.isVisible(), `card ${i} visible`);
      assert.equal(await card.getAttribute("data-status"), "complete", `card ${i} complete`);
      results.push(await card.getByTestId("tool-result").innerText());
    }
    assert.match(results[0], /first turn alpha/);
    assert.match(results[1], /second turn beta/);
    await shot(page, "turns-01-two-tool-cards");
    chatKit.assertNoProblems(problems);
  });

  it("shows a failing run's error in the chat, and the thread takes the next turn", async () => {
    const prompt = "please fail this turn";
    await chatKit.send(page, prompt);
    const error = chat().getByTestId("run-error").last();
    await error.waitFor({ timeout: 20_000 });
    assert.match(await error.innerText(), /reference failure requested/);
    assert.equal(await error.getAttribute("data-code"), "agent_error");
    await chatKit.waitIdle(page);
    await shot(page, "turns-02-run-error");
    // The failed turn's tool card is there too, then the thread goes on.
    assert.equal(await echoCards().count(), 3, "the failing turn's tool card shows");
    await turn("the next turn goes on"); // (no "fail" in it: the reference agent would fail again)
    assert.equal(await echoCards().count(), 4);
    chatKit.assertNoProblems(problems);
  });
});
