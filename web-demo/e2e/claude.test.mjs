// The web demo with the REAL Claude Code CLI in headless Debian chromium: the service runs a `claude`
// agent (AGENT_ADAPTOR_CLAUDE_BIN) in the offline environment of `testkit::claude_env`, talking only to
// the mock Anthropic model (`mock-model-server`, 127.0.0.1). Scenarios: Claude's reply streams into the
// chat; a Bash call needs permission, is approved in the browser, runs, and its output and the model's
// answer to it show. Skipped loudly without the CLI, failed instead when AGENT_ADAPTOR_REQUIRE_CLIS=1.
// Screenshots: 20-claude-streaming, 21-claude-streamed, 22-claude-approval, 23-claude-tool-result.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";

import { assertNoProblems, send, waitForText, waitIdle } from "./chat.mjs";
import { claudeMissing, openBrowser, shot, startDemo, startMockModel, startService } from "./harness.mjs";

const missing = claudeMissing();
if (missing && process.env.AGENT_ADAPTOR_REQUIRE_CLIS === "1") {
  throw new Error(`AGENT_ADAPTOR_REQUIRE_CLIS=1 but the real-Claude browser test cannot run: ${missing}`);
}
if (missing) console.log(`SKIPPED: web demo with the real Claude CLI: ${missing}`);

// A CLI start plus a model turn on a loaded 2-core machine can take a while.
const SLOW = 120_000;

let mock;
let service;
let demo;
let browser;
let page;
let problems;

describe("web demo in chromium (real Claude CLI, mock model)", { skip: missing ? `SKIPPED: ${missing}` : false }, () => {
  before(async () => {
    mock = await startMockModel();
    service = await startService(mock.config);
    demo = await startDemo(service.url, "claude");
    ({ browser, page, problems } = await openBrowser());
    page.setDefaultTimeout(SLOW);
    await page.goto(demo.url);
    await page.getByTestId("copilot-chat-textarea").waitFor();
  });

  after(async () => {
    await browser?.close();
    await demo?.stop();
    await service?.stop();
    await mock?.stop();
  });

  it("streams Claude's reply into the chat", { timeout: 3 * SLOW }, async () => {
    const prompt = "hello Claude from the browser, " + "tell me a long story in many small words ".repeat(4).trim();
    await send(page, prompt);
    const full = `Claude (mock model) answers: ${prompt}`;
    // Streaming: part of the reply shows before the whole of it.
    await page.waitForFunction(
      (full) => {
        const t = [...document.querySelectorAll('[data-testid="copilot-assistant-message"]')].map((e) => e.innerText).join("\n");
        return t.includes("Claude (mock model)") && !t.includes(full);
      },
      full,
    );
    await shot(page, "20-claude-streaming");
    await waitForText(page, full);
    await waitIdle(page);
    await shot(page, "21-claude-streamed");
    const models = mock.requests().filter((r) => r.path === "/v1/messages");
    assert.ok(models.length >= 1, `the CLI called the mock model: ${JSON.stringify(mock.requests())}`);
    assertNoProblems(problems);
  });

  it("asks permission for a Bash call, runs it once approved, and shows the result", { timeout: 3 * SLOW }, async () => {
    const before = mock.requests().filter((r) => r.path === "/v1/messages").length;
    // The CLI works in the agent's `directory` (the project dir), not the service's cwd; the command
    // writes a file there.
    const greeting = path.join(mock.project, "greeting.txt");
    await send(page, "please run bash to greet me");
    const card = page.getByTestId("approval").last();
    await card.getByTestId("approve").waitFor();
    assert.match(await card.innerText(), /Bash/);
    assert.match(await card.innerText(), /echo hello-from-claude-bash/);
    assert.ok(!existsSync(greeting), "nothing ran before the approval");
    await shot(page, "22-claude-approval");
    await card.getByTestId("approve").click();

    await waitForText(page, "Claude saw the tool say: hello-from-claude-bash");
    await waitIdle(page);
    const tool = page.locator('[data-testid="tool-call"][data-tool="Bash"]').last();
    assert.equal(await tool.getAttribute("data-status"), "complete");
    assert.match(await tool.innerText(), /echo hello-from-claude-bash/);
    assert.match(await tool.getByTestId("tool-result").innerText(), /hello-from-claude-bash/);
    assert.equal(readFileSync(greeting, "utf8").trim(), "hello-from-claude-bash", "the approved command ran");
    await shot(page, "23-claude-tool-result");
    // Two more model turns: the tool call, then the answer to its result.
    const after = mock.requests().filter((r) => r.path === "/v1/messages").length;
    assert.ok(after - before >= 2, `model requests: ${JSON.stringify(mock.requests())}`);
    assertNoProblems(problems);
  });
});
