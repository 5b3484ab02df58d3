// The service's own console (GET /, no build step) in headless chromium against `agent-adaptor serve`
// with the memory store. Dev mode: start a run on the `reference` agent, approve its pending approval,
// see the assistant text and tool cards, open the raw events, replay a finished run from the list, and
// render a prompt carrying HTML as text (no dialog, no injected element), and send a supplemental message
// to a running run. Keyed mode: the page asks for
// the key, a wrong key gets the 401 message, the right key lists the tenant's runs and streams a live
// run with the key on every request (the page's network log). Any console error, page error or request
// off loopback fails, except the 401s the keyed test provokes on purpose.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";

import { openBrowser, shot, startService } from "./harness.mjs";

const KEY = "console-e2e-key-0123456789abcdef";
const tmp = mkdtempSync(path.join(os.tmpdir(), "console-e2e-"));

/** A service config file: the memory store, the reference agent, and `tenants` when given. */
function config(name, tenants = "") {
  const file = path.join(tmp, `${name}.toml`);
  writeFileSync(file, `store = "memory"\n\n[[agents]]\nname = "reference"\nprovider = "reference"\n${tenants}`);
  return file;
}

/** Everything the page did that the tests fail on. */
function assertClean(problems, dialogs) {
  assert.deepEqual(problems, [], "console errors, page errors or off-loopback requests");
  assert.deepEqual(dialogs, [], "no dialog opened");
}

/** Starts a run from the composer and waits until the page shows it. */
async function startRun(page, prompt, thread = "") {
  const before = await page.getByTestId("run-id").textContent();
  await page.getByTestId("thread-key").fill(thread);
  await page.getByTestId("prompt").fill(prompt);
  await page.getByTestId("start").click();
  await page.waitForFunction((old) => {
    const id = document.querySelector('[data-testid="run-id"]').textContent;
    return id && id !== old;
  }, before);
}

/** Waits until the run shown has succeeded. */
async function succeeded(page, timeout = 20_000) {
  await page.waitForFunction(() => document.querySelector('[data-testid="run-state"]')?.textContent === "succeeded", null, { timeout });
}

const conversation = (page) => page.getByTestId("conversation");

describe("console, dev mode (reference agent)", () => {
  let service;
  let browser;
  let page;
  let problems;
  const dialogs = [];

  before(async () => {
    service = await startService(config("dev"));
    ({ browser, page, problems } = await openBrowser());
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      d.dismiss().catch(() => {});
    });
    await page.goto(`${service.url}/`);
    await page.locator('[data-testid="agent"] option[value="reference"]').waitFor({ state: "attached" });
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it("starts a run, approves its approval, shows the answer, tool cards and raw events", async () => {
    assert.equal(await page.getByTestId("auth-message").isHidden(), true, "no key prompt in dev mode");
    await startRun(page, "please ask permission to write the notes", "console-dev");
    const approval = conversation(page).getByTestId("approval");
    await approval.waitFor();
    assert.equal(await approval.getAttribute("data-outcome"), "pending");
    assert.match(await approval.innerText(), /write_file notes\.txt/);
    await page.locator('[data-testid="thread"][data-key="console-dev"]').waitFor();
    await shot(page, "console-01-pending-approval");
    await approval.getByTestId("approve").click();

    const answer = conversation(page).getByTestId("assistant-message");
    await succeeded(page);
    assert.match(await answer.innerText(), /Reference reply: please ask permission to write the notes/);
    assert.equal(await approval.getAttribute("data-outcome"), "approved");
    const echo = conversation(page).locator('[data-testid="tool-card"][data-tool="echo"]');
    assert.equal(await echo.getAttribute("data-status"), "complete");
    assert.match(await echo.getByTestId("tool-output").innerText(), /please ask permission/);
    const write = conversation(page).locator('[data-testid="tool-card"][data-tool="write_file"]');
    assert.equal(await write.getAttribute("data-status"), "complete");
    assert.match(await write.getByTestId("tool-input").innerText(), /notes\.txt/);
    assert.equal(await conversation(page).getByTestId("user-message").innerText(), "You\nplease ask permission to write the notes");
    assert.equal(await conversation(page).getByTestId("reasoning").count(), 1, "reasoning is there, collapsed");
    assert.equal(await conversation(page).locator("details[open]").count(), 0);
    // The thread is listed, newest first.
    await page.locator('[data-testid="thread"][data-key="console-dev"]').waitFor();
    await page.setViewportSize({ width: 1100, height: 1180 }); // the whole conversation (docs/console.png)
    await shot(page, "console-02-conversation");
    await page.setViewportSize({ width: 1100, height: 820 });

    // The raw event records, one click away.
    assert.equal(await page.getByTestId("raw-events").isHidden(), true);
    await page.getByTestId("raw-toggle").click();
    const raw = page.getByTestId("raw-event");
    assert.ok((await raw.count()) > 10, "the raw events show");
    assert.equal(await page.locator('[data-testid="raw-event"][data-type="approval_request"]').count(), 1);
    assert.equal(await page.locator('[data-testid="raw-event"][data-type="done"]').count(), 1);
    await shot(page, "console-03-raw-events");
    await page.getByTestId("raw-toggle").click();
    assertClean(problems, dialogs);
  });

  it("replays a finished run from the thread's run list", async () => {
    await startRun(page, "a second turn on the thread", "console-dev");
    await succeeded(page);
    await page.locator('[data-testid="thread"][data-key="console-dev"]').click();
    const runs = page.getByTestId("run");
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="run"]').length === 2);
    await runs.last().click(); // the oldest: the run with the approval
    const approval = conversation(page).getByTestId("approval");
    await approval.waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid="approval"]')?.getAttribute("data-outcome") === "approved");
    assert.equal(await approval.getByTestId("approve").count(), 0, "no buttons on an answered approval");
    assert.match(await conversation(page).getByTestId("assistant-message").innerText(), /please ask permission/);
    // The search box filters the threads.
    await page.getByTestId("search").fill("no-such-thread");
    assert.equal(await page.getByTestId("thread").count(), 0);
    await page.getByTestId("search").fill("console-dev");
    assert.equal(await page.getByTestId("thread").count(), 1);
    await page.getByTestId("search").fill("");
    assertClean(problems, dialogs);
  });

  it("renders a prompt carrying HTML as text", async () => {
    const prompt = `<img src=x onerror="alert('xss')"><b>bold</b> hello`;
    await startRun(page, prompt);
    await succeeded(page);
    const conv = conversation(page);
    assert.equal(await conv.getByTestId("user-message").innerText(), `You\n${prompt}`);
    assert.match(await conv.getByTestId("assistant-message").innerText(), /<img src=x onerror="alert\('xss'\)"><b>bold<\/b> hello/);
    assert.match(await conv.getByTestId("tool-input").first().innerText(), /<img src=x/);
    assert.equal(await page.locator("img, b").count(), 0, "no element was injected");
    await shot(page, "console-04-html-as-text");
    assertClean(problems, dialogs);
  });
});

describe("console, dev mode: supplemental messages", () => {
  let service;
  let browser;
  let page;
  let problems;
  const dialogs = [];

  before(async () => {
    service = await startService(config("messages"));
    ({ browser, page, problems } = await openBrowser());
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      d.dismiss().catch(() => {});
    });
    await page.goto(`${service.url}/`);
    await page.locator('[data-testid="agent"] option[value="reference"]').waitFor({ state: "attached" });
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it("sends a message to the running run and shows its delivery", async () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    await startRun(page, `a slow reply please ${words}`);
    await page.getByTestId("message").waitFor();
    await page.getByTestId("message").fill("also say <b>bye</b>");
    await page.getByTestId("send-message").click();
    const sent = conversation(page).getByTestId("sent-message");
    await sent.waitFor();
    assert.equal(await sent.innerText(), "You (message)\nalso say <b>bye</b>");
    await succeeded(page, 30_000);
    await page.locator('[data-testid="notice"][data-kind="message"]', { hasText: "delivered" }).waitFor();
    assert.equal(await page.locator("#message-form").isHidden(), true, "no message box once the run ended");
    const view = await (await fetch(`${service.url}/v1/runs/${await page.getByTestId("run-id").textContent()}`)).json();
    assert.match(view.result.text, /\(noted: also say <b>bye<\/b>\)/, "the run took the message");
    assert.equal(await page.locator("b").count(), 0, "the message is text");
    assertClean(problems, dialogs);
  });
});

describe("console, keyed mode (a tenant with an API key)", () => {
  let service;
  let browser;
  let page;
  let problems;
  const dialogs = [];
  const requests = [];

  before(async () => {
    service = await startService(config("keyed", `\n[[tenants]]\nname = "acme"\nkeys = ["${KEY}"]\n`));
    // A finished run of the tenant, made before the page opens.
    const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const resp = await fetch(`${service.url}/v1/agents/reference/threads/acme-history/runs`, { method: "POST", headers, body: JSON.stringify({ prompt: "history of acme" }) });
    assert.equal(resp.status, 201);
    const { run_id } = await resp.json();
    for (let i = 0; i < 100; i++) {
      const run = await (await fetch(`${service.url}/v1/runs/${run_id}`, { headers })).json();
      if (run.state === "succeeded") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    ({ browser, page, problems } = await openBrowser());
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      d.dismiss().catch(() => {});
    });
    page.on("request", (r) => requests.push({ url: r.url(), auth: r.headers().authorization ?? null }));
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("asks for the key, says a wrong key is refused, and works with the right one", async () => {
    await page.goto(`${service.url}/`);
    const banner = page.getByTestId("auth-message");
    await banner.waitFor();
    assert.match(await banner.innerText(), /needs an API key \(401 unauthorized\)/);
    assert.equal(await page.getByTestId("thread").count(), 0);

    await page.getByTestId("api-key").fill("wrong-key-0123456789abcdef");
    await page.getByTestId("use-key").click();
    await page.waitForFunction(() => /did not accept/.test(document.querySelector('[data-testid="auth-message"]').textContent));
    await shot(page, "console-05-wrong-key");

    await page.getByTestId("api-key").fill(KEY);
    await page.getByTestId("use-key").click();
    await page.locator('[data-testid="thread"][data-key="acme-history"]').waitFor();
    assert.equal(await banner.isHidden(), true, "the banner goes once the key works");
    assert.equal(await page.evaluate(() => localStorage.length), 0, "nothing in localStorage");
    assert.equal(await page.evaluate(() => Object.values({ ...sessionStorage }).includes("console-e2e-key-0123456789abcdef")), true);

    // A live run streams with the key.
    await startRun(page, "a slow live run for acme", "acme-live");
    await succeeded(page, 30_000);
    assert.match(await conversation(page).getByTestId("assistant-message").innerText(), /Reference reply: a slow live run for acme/);
    const events = requests.filter((r) => /\/v1\/runs\/[^/]+\/events/.test(r.url));
    assert.ok(events.length >= 1, "the events were streamed");
    for (const r of events) assert.equal(r.auth, `Bearer ${KEY}`, `the key on ${r.url}`);
    const after = requests.slice(requests.findIndex((r) => r.auth === `Bearer ${KEY}`));
    for (const r of after.filter((r) => r.url.includes("/v1/"))) assert.equal(r.auth, `Bearer ${KEY}`, `the key on ${r.url}`);
    assert.equal(requests.filter((r) => r.url.includes(KEY)).length, 0, "the key is never in a URL");
    await shot(page, "console-06-keyed-live-run");

    // The only console errors are the browser's own reports of the 401s provoked above.
    const unexpected = problems.filter((p) => !/Failed to load resource: the server responded with a status of 401/.test(p));
    assert.ok(problems.length > unexpected.length, "the 401s were seen");
    assertClean(unexpected, dialogs);
  });
});
