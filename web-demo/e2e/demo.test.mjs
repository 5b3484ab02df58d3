// The web demo end to end in headless Debian chromium: a CopilotKit (v2) chat through the real
// CopilotKit runtime to agent-adaptor's AG-UI route (built-in `reference` agent). Streamed text, an
// approved permission with its tool result, a question answered with a choice (the run continues with
// the answer), a stopped run, and a reload that resumes the thread. Any console error, page error or
// request off loopback fails the test.
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
const assistantText = () => chatKit.assistantText(page);
const send = (prompt) => chatKit.send(page, prompt);
const waitIdle = () => chatKit.waitIdle(page);
const assertNoProblems = () => chatKit.assertNoProblems(problems);

before(async () => {
  service = await startService();
  demo = await startDemo(service.url);
  ({ browser, page, problems } = await openBrowser());
  page.on("console", (m) => {
    if (m.type() === "warning" && /ag-?ui|AGUI|copilotkit/i.test(m.text())) problems.push(`console.warn: ${m.text()}`);
  });
  await page.goto(demo.url);
  await page.getByTestId("copilot-chat-textarea").waitFor();
});

after(async () => {
  await browser?.close();
  await demo?.stop();
  await service?.stop();
});

describe("web demo in chromium (reference agent)", () => {
  it("streams the reply into the chat, with the reasoning and the tool call rendered", async () => {
    const prompt = "slow hello from the browser, tell me something in several words";
    await send(prompt);
    // Streaming: part of the reply shows before the whole of it.
    const full = `Reference reply: ${prompt}`;
    await page.waitForFunction(
      (full) => {
        const t = [...document.querySelectorAll('[data-testid="copilot-assistant-message"]')].map((e) => e.innerText).join("\n");
        return t.includes("Reference reply") && !t.includes(full);
      },
      full,
    );
    await shot(page, "01-streaming");
    await page.waitForFunction((full) => document.body.innerText.includes(full), full);
    await waitIdle();
    const echo = chat().locator('[data-testid="tool-call"][data-tool="echo"]');
    await echo.waitFor();
    assert.equal(await echo.getAttribute("data-status"), "complete");
    assert.match(await echo.getByTestId("tool-result").innerText(), /slow hello from the browser/);
    assert.match(await chat().innerText(), /Thought for/);
    await shot(page, "02-streamed");
    assertNoProblems();
  });

  it("approves a permission request and shows the gated tool's result", async () => {
    await send("please ask permission to write the notes");
    const card = chat().getByTestId("approval").last();
    await card.getByTestId("approve").waitFor();
    await shot(page, "03-approval");
    await card.getByTestId("approve").click();
    const write = chat().locator('[data-testid="tool-call"][data-tool="write_file"]').last();
    await write.getByTestId("tool-result").waitFor();
    assert.match(await write.getByTestId("tool-result").innerText(), /wrote 5 bytes to notes\.txt/);
    await page.waitForFunction(() => document.body.innerText.includes("Reference reply: please ask permission"));
    await waitIdle();
    assert.match(await assistantText(), /approved/);
    await shot(page, "04-approved");
    assertNoProblems();
  });

  it("answers a question with a choice and the run continues with the answer", async () => {
    const prompt = "a question for you about the button";
    await send(prompt);
    const card = chat().getByTestId("question").last();
    await card.getByTestId("choice-green").waitFor();
    assert.match(await card.innerText(), /Which colour should the button be\?/);
    for (const c of ["red", "green", "blue"]) assert.ok(await card.getByTestId(`choice-${c}`).isVisible(), `choice ${c}`);
    await shot(page, "05-question");
    await card.getByTestId("choice-green").click();
    await card.getByText("You answered green.").waitFor();
    // The same run goes on: the decision gets its result, then the reply streams in.
    await page.waitForFunction(
      () => [...document.querySelectorAll('[data-testid="question"]')].at(-1)?.getAttribute("data-status") === "complete",
    );
    assert.match(await card.locator(".result").innerText(), /answered/);
    await page.waitForFunction((p) => document.body.innerText.includes(`Reference reply: ${p}`), prompt);
    await waitIdle();
    // The service's record of that run carries the answer the agent received.
    const runId = await card.getAttribute("data-run");
    assert.ok(runId, "the question names its run");
    const run = await page.evaluate(async (id) => (await fetch(`/api/service/v1/runs/${encodeURIComponent(id)}`)).json(), runId);
    assert.equal(run.state, "succeeded", JSON.stringify(run));
    assert.match(run.result.text, /\[answer: green\]/);
    await shot(page, "06-answered");
    assertNoProblems();
  });

  it("stops a running reply with the stop button", async () => {
    const prompt = "slow " + "long story ".repeat(40);
    await send(prompt);
    await page.waitForFunction(() => document.body.innerText.includes("Reference reply: slow"));
    await page.getByTestId("copilot-send-button").click();
    await waitIdle();
    await shot(page, "07-stopped");
    const before = await assistantText();
    await page.waitForTimeout(1_500);
    assert.equal(await assistantText(), before, "text kept streaming after stop");
    assert.ok(!before.includes(`Reference reply: ${prompt.trim()}`), "the stopped reply must not be complete");
    // The thread is usable again right away.
    await send("after the stop");
    await page.waitForFunction(() => document.body.innerText.includes("Reference reply: after the stop"));
    await waitIdle();
    assertNoProblems();
  });

  it("reloads, resumes the thread, and reopens it from the thread picker", async () => {
    const thread = new URL(page.url()).searchParams.get("thread");
    assert.ok(thread, "the thread id is in the URL");
    await page.reload();
    await page.getByTestId("copilot-chat-textarea").waitFor();
    await page.waitForFunction(() => document.body.innerText.includes("Reference reply: after the stop"));
    await send("resumed after reload");
    await page.waitForFunction(() => document.body.innerText.includes("Reference reply: resumed after reload"));
    await waitIdle();
    await shot(page, "08-resumed");

    await page.getByTestId("new-thread").click();
    await page.waitForFunction((t) => new URL(location.href).searchParams.get("thread") !== t, thread);
    await send("a second thread");
    await page.waitForFunction(() => document.body.innerText.includes("Reference reply: a second thread"));
    await waitIdle();
    assert.ok(!(await chat().innerText()).includes("resumed after reload"));

    await page.getByTestId("thread-picker").selectOption(thread);
    await page.waitForFunction(() => document.body.innerText.includes("Reference reply: resumed after reload"));
    assert.equal(new URL(page.url()).searchParams.get("thread"), thread);
    await shot(page, "09-picked");
    assertNoProblems();
  });
});
