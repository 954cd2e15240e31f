import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../../testing/app.js";
import { buildUiInto, chromiumAvailable, chromiumRequired, launchChromium } from "../../testing/browser.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../testing/trainer-app.js";
import { endOf, startOf, traceClient } from "../../testing/trace.js";
import { isTerminal, waitForJob } from "../../testing/training.js";

/** Past the list's count cap (1,000), so the page shows "1,000+ calls". */
const MANY_CALLS = 1050;
// docs/ui/ when FLYWHEEL_UI_SCREENSHOTS=1 (to refresh the documentation's pictures), else a
// temporary folder, removed after the run, so that a test run leaves the working tree as it was.
const KEEP_SCREENSHOTS = process.env.FLYWHEEL_UI_SCREENSHOTS === "1";
const SCREENSHOTS = KEEP_SCREENSHOTS ? fileURLToPath(new URL("../../../docs/ui/", import.meta.url)) : path.join(os.tmpdir(), `flywheel-ui-shots-${process.pid}/`);
const runIt = chromiumAvailable() || chromiumRequired ? describe : describe.skip;
if (!chromiumAvailable() && !chromiumRequired) console.warn("Chromium is not installed at /usr/bin/chromium: the browser tests are skipped");

/**
 * The web UI in a real browser, on a real server that trained a model for two RL steps on the tiny
 * model and holds a small trace: log in (a wrong key first), the model's reward chart with one
 * point per trained step, its rollouts as chat and as tokens, a trace's tree; no console errors.
 * Screenshots go to docs/ui/ with FLYWHEEL_UI_SCREENSHOTS=1.
 */
runIt("web UI in Chromium", () => {
  let t: TestApp;
  let base: string;
  let context: BrowserContext;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const consoleErrors: string[] = [];
  let modelId: string;
  let rootCallId: string;
  let uiDir: string;

  beforeAll(async () => {
    uiDir = buildUiInto();
    t = await startTrainingApp("sqlite", { uiDir });
    base = await t.app.listen({ port: 0, host: "127.0.0.1" });
    modelId = await trainTwoSteps(t);
    rootCallId = await logTrace(t);
    await logEvaluations(t);
    await logManyCalls(t, MANY_CALLS);
    ({ context, close: closeBrowser } = await launchChromium());
    page = await context.newPage();
    page.on("console", (message) => message.type() === "error" && consoleErrors.push(message.text()));
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await closeBrowser?.();
    await t?.close();
    if (uiDir) fs.rmSync(uiDir, { recursive: true, force: true });
    if (!KEEP_SCREENSHOTS) fs.rmSync(SCREENSHOTS, { recursive: true, force: true });
  });

  it("refuses a wrong key with a clear message, then logs in and lists the model", async () => {
    const response = await page.goto(`${base}/`);
    expect(response?.headers()["content-security-policy"]).toMatch(/^default-src 'self'/);
    await page.fill("#api-key", "not-a-key");
    await page.click("button[type=submit]");
    await expect.poll(() => page.textContent("[role=alert]")).toMatch(/not accepted/);
    await page.screenshot({ path: `${SCREENSHOTS}login.png` });
    // The refused key's 401 is the only error so far; the browser logs it as one.
    expect(consoleErrors).toEqual([expect.stringContaining("401")]);
    consoleErrors.length = 0;
    await page.fill("#api-key", t.keys.alice);
    await page.click("button[type=submit]");
    await page.waitForSelector("[data-testid=models] tbody tr");
    const row = await page.textContent("[data-testid=models] tbody tr");
    expect(row).toContain("rl-demo");
    expect(row).toContain(TINY_BASE_MODEL);
    expect(row).toContain("succeeded");
    await page.screenshot({ path: `${SCREENSHOTS}models.png` });
    // The key survives a reload of the tab (session storage).
    await page.reload();
    await page.waitForSelector("[data-testid=models] tbody tr");
  });

  it("shows the model's reward chart with one point per trained step, its jobs and checkpoints", async () => {
    await page.click(`a[href="#/models/${modelId}"]`);
    await page.waitForSelector("[data-chart=reward] canvas");
    expect(await page.getAttribute("[data-chart=reward]", "data-points")).toBe("2");
    for (const chart of ["loss", "grad-norm", "learning-rate"]) expect(await page.$(`[data-chart=${chart}] canvas`), chart).not.toBeNull();
    // The chart, the jobs and the checkpoints load separately: poll each.
    await expect.poll(() => page.$$eval("[data-testid=jobs] tbody tr", (rows) => rows.length)).toBe(2);
    await expect.poll(() => page.textContent("[data-testid=checkpoints]")).toContain(`wandb-artifact:///alice/rl-demo/adder:step2`);
    await page.screenshot({ path: `${SCREENSHOTS}model.png`, fullPage: true });
  });

  it("opens a job's rollouts side by side, as chat and as tokens coloured by logprob, the trainer's on hover", async () => {
    await page.click("[data-testid=jobs] tbody tr:last-child a:has-text('Rollouts')");
    await page.waitForSelector("[data-testid=trajectories] .trajectory");
    expect(await page.$$eval("[data-testid=trajectories] .trajectory", (cards) => cards.length)).toBe(2);
    expect(await page.textContent("[data-testid=trajectories]")).toContain("What is 2 + 3?");
    await page.click("text=Tokens by logprob");
    await page.waitForSelector("[data-testid=tokens] .token");
    expect(await page.getAttribute("[data-testid=tokens] .token", "title")).toMatch(/^sampler logprob -?\d/);
    // Hovering a token shows the trainer's recomputed logprob beside the sampler's, and their difference.
    await page.hover("[data-testid=tokens] .token");
    const tip = await page.textContent("[data-testid=token-tip]");
    expect(tip).toMatch(/sampler logprob -?\d+\.\d{4}/);
    expect(tip).toMatch(/trainer logprob -?\d+\.\d{4} · difference -?\d+\.\d{4}/);
    expect(page.url()).toContain("view=tokens");
    await page.screenshot({ path: `${SCREENSHOTS}rollouts.png`, fullPage: true });
    // The view is in the URL: back returns to the chat view.
    await page.goBack();
    await expect.poll(() => page.url()).not.toContain("view=tokens");
  });

  it("lists calls, filters them, opens a trace's tree and a call's conversation, and adds feedback", async () => {
    await page.click("nav a:has-text('Traces')");
    await expect.poll(() => page.textContent("[data-testid=call-count]")).toBe("3 calls");
    await page.check("text=roots only");
    await expect.poll(() => page.textContent("[data-testid=call-count]")).toBe("1 calls");
    await page.click(`[data-testid=call-list] a.call-row`);
    await page.waitForSelector("[data-testid=trace-tree] .tree-row");
    expect(page.url()).toContain(`call=${rootCallId}`);
    expect(await page.$$eval("[data-testid=trace-tree] .tree-row", (rows) => rows.map((row) => row.textContent))).toEqual(["agent", "chat", "lookup"]);
    await page.click("[data-testid=trace-tree] .tree-row:has-text('chat')");
    await page.waitForSelector("[data-testid=call-detail] .chat .bubble");
    expect(await page.textContent("[data-testid=call-detail] .chat")).toContain("Paris");
    expect(await page.textContent("[data-testid=call-detail]")).toContain("prompt_tokens");
    await page.click("[data-testid=feedback] button[title='React with 👍']");
    await expect.poll(() => page.textContent("[data-testid=feedback] .feedback-list")).toContain("👍");
    await page.screenshot({ path: `${SCREENSHOTS}traces.png`, fullPage: true });
    await page.uncheck("text=roots only");
    await expect.poll(() => page.textContent("[data-testid=call-count]")).toBe("3 calls");
    await page.selectOption("label:has-text('Reaction') select", "👍");
    await expect.poll(() => page.textContent("[data-testid=call-count]")).toBe("1 calls");
    await expect.poll(() => page.textContent("[data-testid=call-list] a.call-row")).toContain("chat");
    await page.selectOption("label:has-text('Reaction') select", "");
    await page.fill("input[type=search]", "capital OF");
    await page.press("input[type=search]", "Enter");
    await expect.poll(() => page.textContent("[data-testid=call-count]")).toBe("2 calls");
    await page.selectOption("label:has-text('Status') select", "error");
    await expect.poll(() => page.textContent("[data-testid=call-count]")).toBe("0 calls");
    await page.fill("input[type=search]", "");
    await page.press("input[type=search]", "Enter");
    await expect.poll(() => page.textContent("[data-testid=call-count]")).toBe("1 calls");
    expect(page.url()).toContain("status=error");
    // Two characters have no trigram to look up: the page asks for a third instead of scanning.
    await page.fill("input[type=search]", "OF");
    await page.press("input[type=search]", "Enter");
    await expect.poll(() => page.textContent("[data-testid=search-hint]")).toBe("Search needs at least 3 characters");
    expect(page.url()).not.toContain("q=");
    expect(await page.textContent("[data-testid=call-count]")).toBe("1 calls");
  });

  it("keeps only the rows in view in the page, and loads the others as they scroll into view", async () => {
    await page.goto(`${base}/#/traces?project=many`);
    await expect.poll(() => page.textContent("[data-testid=call-count]")).toBe("1,000+ calls");
    await page.waitForSelector("[data-testid=call-list] a.call-row");
    expect(await page.$$eval("[data-testid=call-list] .vrow", (rows) => rows.length)).toBeLessThan(60);
    await expect.poll(() => page.textContent("[data-testid=call-list] a.call-row")).toContain(`op-${MANY_CALLS - 1}`);
    // The oldest call is the last row: past the capped count the list grows a page at a time as
    // its end is reached, so scrolling to the end again and again fetches its page.
    await expect
      .poll(
        async () => {
          await page.$eval("[data-testid=call-list] .vlist", (list) => (list.scrollTop = list.scrollHeight));
          return page.$$eval("[data-testid=call-list] a.call-row .op", (ops) => ops.map((op) => op.textContent));
        },
        { timeout: 10_000, interval: 200 },
      )
      .toContain("op-0");
    // A short page ended it: exactly as many rows as calls.
    await expect.poll(() => page.$eval("[data-testid=call-list] .vspace", (space) => space.getAttribute("style"))).toContain(`height: ${MANY_CALLS * 28}px`);
    expect(await page.$$eval("[data-testid=call-list] .vrow", (rows) => rows.length)).toBeLessThan(60);
  });

  it("adds selected calls to a dataset and browses its rows", async () => {
    await page.goto(`${base}/#/traces?project=demo`);
    await expect.poll(() => page.textContent("[data-testid=call-count]")).toBe("3 calls");
    // The count may come before the rows: wait for the rows' boxes.
    const boxSelector = "[data-testid=call-list] .call-line input[type=checkbox]";
    await expect.poll(() => page.$$eval(boxSelector, (boxes) => boxes.length)).toBe(3);
    const boxes = await page.$$(boxSelector);
    await boxes[0]!.check();
    await boxes[1]!.check();
    await page.fill("[data-testid=add-to-dataset] input", "from traces");
    await page.click("[data-testid=add-to-dataset] button");
    await expect.poll(() => page.textContent("[data-testid=add-to-dataset] [role=status]")).toMatch(/Added 2 call\(s\): from traces v0 has 2 rows/);
    await page.click("[data-testid=add-to-dataset] a:has-text('Open it')");
    await expect.poll(() => page.textContent("[data-testid=dataset-count]")).toBe("2 rows");
    // The count and the rows are two requests: wait for the rows too.
    await expect.poll(() => page.textContent("[data-testid=dataset-rows]")).toContain("source_call_id");
    await page.screenshot({ path: `${SCREENSHOTS}datasets.png`, fullPage: true });
  });

  it("compares two evaluation runs: scores, then rows with the differences first", async () => {
    await page.click("nav a:has-text('Evaluations')");
    // The datasets page before it has a Project select too: wait for this page's before choosing.
    await page.waitForSelector("text=Select two runs to compare them.");
    await page.selectOption("label:has-text('Project') select", "evals");
    await page.waitForSelector("[data-testid=evaluation-runs] tbody tr");
    expect(await page.$$eval("[data-testid=evaluation-runs] tbody tr", (rows) => rows.length)).toBe(2);
    await page.check("[data-testid=evaluation-runs] tbody tr:nth-child(1) input[type=checkbox]");
    await page.check("[data-testid=evaluation-runs] tbody tr:nth-child(2) input[type=checkbox]");
    await page.click("text=Compare the two selected");
    await page.waitForSelector("[data-testid=compare-rows] tbody tr");
    const summary = await page.$$eval("[data-testid=compare-summary] tbody tr", (rows) => rows.map((row) => [...row.querySelectorAll("td")].map((cell) => cell.textContent)));
    // A is the older run (one row right), B the newer (both right).
    expect(summary).toEqual([["exact_match", "0.5", "1", "0.5"]]);
    const rows = await page.$$eval("[data-testid=compare-rows] tbody tr", (trs) => trs.map((tr) => ({ differs: tr.classList.contains("differs"), text: tr.textContent })));
    expect(rows.map((row) => row.differs)).toEqual([true, false]);
    expect(rows[0]!.text).toContain("2+2");
    await page.screenshot({ path: `${SCREENSHOTS}evaluations.png`, fullPage: true });
  });

  it("logged no console errors", () => {
    expect(consoleErrors).toEqual([]);
  });
});

/** Two real RL steps on the tiny model: completions sampled from each checkpoint, rewarded, trained on. */
async function trainTwoSteps(t: TestApp): Promise<string> {
  const registered = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "rl-demo", name: "adder", base_model: TINY_BASE_MODEL } });
  const model = registered.json() as { id: string };
  for (let step = 0; step < 2; step++) {
    const groups = [];
    for (const [index, question] of ["What is 2 + 3?", "What is 4 + 4?"].entries()) {
      const messages = [{ role: "user", content: question }];
      const completion = await t.request(t.keys.alice, {
        method: "POST",
        url: "/v1/chat/completions",
        payload: { model: `wandb-artifact:///alice/rl-demo/adder:step${step}`, messages, n: 2, max_completion_tokens: 6, temperature: 1, seed: 10 * index + step },
      });
      if (completion.statusCode !== 200) throw new Error(`sampling failed: ${completion.body}`);
      const choices = completion.json().choices as unknown[];
      groups.push({ trajectories: choices.map((choice, i) => ({ messages_and_choices: [...messages, choice], reward: i === 0 ? 1 : 0, metrics: {}, metadata: {} })), exceptions: [] });
    }
    const job = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/training-jobs", payload: { model_id: model.id, trajectory_groups: groups } });
    expect(await waitForJob(t, job.json().id, isTerminal)).toMatchObject({ status: "succeeded", step: step + 1 });
  }
  return model.id;
}

/** A trace of three calls: an agent, a chat completion under it, and a tool call that failed. */
async function logTrace(t: TestApp): Promise<string> {
  const trace = traceClient(t, t.keys.alice);
  const project = "alice/demo";
  const root = await trace.json<{ id: string; trace_id: string }>("/call/start", { start: startOf(project, { op_name: "agent", started_at: "2024-05-01T12:00:00.000Z", inputs: { question: "Capital of France?" } }) });
  const chat = await trace.json<{ id: string }>("/call/start", {
    start: startOf(project, {
      op_name: "chat",
      trace_id: root.trace_id,
      parent_id: root.id,
      started_at: "2024-05-01T12:00:00.100Z",
      inputs: { model: "m", messages: [{ role: "user", content: "Capital of France?" }] },
    }),
  });
  await trace.json("/call/end", {
    end: endOf(project, chat.id, {
      ended_at: "2024-05-01T12:00:00.600Z",
      summary: { usage: { m: { requests: 1, prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } } },
      output: { choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Paris" } }] },
    }),
  });
  const tool = await trace.json<{ id: string }>("/call/start", { start: startOf(project, { op_name: "lookup", trace_id: root.trace_id, parent_id: root.id, started_at: "2024-05-01T12:00:00.700Z" }) });
  await trace.json("/call/end", { end: endOf(project, tool.id, { ended_at: "2024-05-01T12:00:00.800Z", exception: "ValueError: boom" }) });
  await trace.json("/call/end", { end: endOf(project, root.id, { ended_at: "2024-05-01T12:00:01.000Z", output: "Paris" }) });
  return root.id;
}

/** Two runs of one evaluation over two rows: the first run gets one row right, the second both. */
async function logEvaluations(t: TestApp): Promise<void> {
  const c = traceClient(t, t.keys.alice);
  const v2 = "/v2/alice/evals";
  const dataset = await c.json(`${v2}/datasets`, {
    name: "sums",
    rows: [
      { q: "1+1", a: "2" },
      { q: "2+2", a: "4" },
    ],
  });
  const scorer = (await c.json(`${v2}/scorers`, { name: "Exact Match", op_source_code: "def score(output, a): return output == a" })).scorer;
  const evaluation = (await c.json(`${v2}/evaluations`, { name: "sums-eval", dataset: `weave:///alice/evals/object/${dataset.object_id}:${dataset.digest}`, scorers: [scorer] })).evaluation_ref;
  for (const [name, answers] of [
    ["first-model", ["2", "5"]],
    ["second-model", ["2", "4"]],
  ] as const) {
    const model = (await c.json(`${v2}/models`, { name, source_code: "def predict(q): ..." })).model_ref;
    const runId = (await c.json(`${v2}/evaluation_runs`, { evaluation, model })).evaluation_run_id as string;
    for (const [index, q] of ["1+1", "2+2"].entries()) {
      const output = answers[index]!;
      const predictionId = (await c.json(`${v2}/predictions`, { model, inputs: { q }, output, evaluation_run_id: runId })).prediction_id as string;
      await c.json(`${v2}/scores`, { prediction_id: predictionId, scorer, value: output === ["2", "4"][index] ? 1 : 0, evaluation_run_id: runId });
      await c.post(`${v2}/predictions/${predictionId}/finish`, {});
    }
    await c.post(`${v2}/evaluation_runs/${runId}/finish`, {});
  }
}

/** `count` root calls one second apart in project "many", ops op-0 (oldest) to op-{count-1}. */
async function logManyCalls(t: TestApp, count: number): Promise<void> {
  const trace = traceClient(t, t.keys.alice);
  const started = (index: number) => new Date(Date.UTC(2024, 0, 1) + index * 1000).toISOString();
  const batch = Array.from({ length: count }, (_, index) => [
    { mode: "start", req: { start: startOf("alice/many", { id: `call-${index}`, trace_id: `trace-${index}`, op_name: `op-${index}`, started_at: started(index) }) } },
    { mode: "end", req: { end: endOf("alice/many", `call-${index}`, { ended_at: started(index + 0.5) }) } },
  ]).flat();
  await trace.json("/call/upsert_batch", { batch });
}
