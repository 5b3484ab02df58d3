// Chat helpers shared by the e2e tests: type a prompt into CopilotKit's chat, wait until the chat is
// idle again, read the assistant's text, and fail on recorded problems.
import assert from "node:assert/strict";

/**
 * Types `prompt` into the chat, sends it and waits until the user message shows. An Enter that lands
 * before the chat has wired its handler (a freshly loaded page) leaves the prompt in the textarea:
 * only then is Enter pressed again, so a prompt is never sent twice.
 */
export async function send(page, prompt) {
  const input = page.getByTestId("copilot-chat-textarea");
  const shown = page.getByTestId("copilot-user-message").filter({ hasText: prompt }).first();
  await input.fill(prompt);
  for (let attempt = 0; ; attempt++) {
    await input.press("Enter");
    try {
      await shown.waitFor({ timeout: 5000 });
      return;
    } catch (e) {
      if (attempt >= 5 || (await input.inputValue()) !== prompt) throw e;
    }
  }
}

/** Waits until the stop button has turned back into a send button (no run in progress). */
export async function waitIdle(page) {
  await page.waitForFunction(() => {
    const b = document.querySelector('[data-testid="copilot-send-button"]');
    return b && !/stop/i.test(b.getAttribute("aria-label") ?? "") && !b.querySelector("rect");
  });
}

/** Every assistant message's text, joined with newlines. */
export async function assistantText(page) {
  return (await page.getByTestId("copilot-assistant-message").allInnerTexts()).join("\n");
}

/** Waits until the page's text contains `text`. */
export async function waitForText(page, text) {
  await page.waitForFunction((t) => document.body.innerText.includes(t), text);
}

/** Fails with the recorded console errors, page errors and off-loopback requests, if any. */
export function assertNoProblems(problems) {
  assert.deepEqual(problems, [], "console errors, page errors or off-loopback requests");
}

/** The service's record of run `id`, fetched from the page through the demo server's relay. */
export async function serviceRun(page, id) {
  return page.evaluate(async (id) => (await fetch(`/api/service/v1/runs/${encodeURIComponent(id)}`)).json(), id);
}
