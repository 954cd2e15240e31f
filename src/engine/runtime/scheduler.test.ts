import { describe, expect, it } from "vitest";
import { choiceIds, choiceTokens, collectUpdates, finishOf, greedyReference, runCore, startedOf, type RequestResult } from "../../testing/engine.js";
import { testKernelBackends } from "../../testing/kernel-backends.js";
import { loadTinyModel } from "../../testing/models.js";
import type { LoadedModel } from "../model/load.js";
import { defaultSamplingParams, type SamplingParams } from "../sampling/params.js";
import { EngineCore } from "./engine-core.js";
import type { WireGenerateRequest } from "./intake.js";
import { resolveSchedulerOptions, type SchedulerOptions } from "./options.js";
import { noConstraintBackend } from "./seams.js";

const model = loadTinyModel("qwen2");
const text = model.tokenizer.encode("Once upon a time, in a land far away, there lived a curious little robot who loved to count stars.");
const prompt = (length: number, offset = 0) => Array.from({ length }, (_, i) => text[(i + offset) % text.length]!);
const greedy = (maxTokens: number): Partial<SamplingParams> => ({ temperature: 0, maxTokens, ignoreEos: true });

async function makeCore(options: Partial<SchedulerOptions>, on: LoadedModel = model): Promise<EngineCore> {
  return new EngineCore({ model: on, scheduler: resolveSchedulerOptions(options), constraints: await noConstraintBackend(on) });
}

function request(requestId: string, promptTokenIds: number[], params: Partial<SamplingParams>, extra: Partial<WireGenerateRequest> = {}): WireGenerateRequest {
  return { requestId, promptTokenIds, params: defaultSamplingParams(params), ...extra };
}

/** Runs to the end, recording the order in which requests started (= were admitted, with one slot). */
async function startOrder(core: EngineCore): Promise<string[]> {
  const order: string[] = [];
  const results = new Map<string, RequestResult>();
  while (!core.idle) {
    await core.step();
    for (const update of core.takeUpdates()) {
      if (update.events.some((event) => event.type === "started")) order.push(update.requestId);
      results.set(update.requestId, { events: [] });
    }
  }
  return order;
}

describe("admission order", () => {
  async function contend(priorityScheduling: boolean): Promise<string[]> {
    const core = await makeCore({ maxRunningSequences: 1, priorityScheduling });
    core.submit(request("running", prompt(5), greedy(3), { priority: 9 }));
    await core.step(); // admitted: the only slot is taken
    const priorities: [string, number][] = [
      ["p5", 5],
      ["p1", 1],
      ["p3", 3],
      ["p1-later", 1],
      ["p-2", -2],
    ];
    for (const [id, priority] of priorities) core.submit(request(id, prompt(4), greedy(2), { priority }));
    return startOrder(core);
  }

  it("admits lower priority values first, FCFS among equals, with priority scheduling", async () => {
    expect(await contend(true)).toEqual(["running", "p-2", "p1", "p1-later", "p3", "p5"]);
  });

  it("admits in arrival order otherwise", async () => {
    expect(await contend(false)).toEqual(["running", "p5", "p1", "p3", "p1-later", "p-2"]);
  });
});

describe("admission limits", () => {
  it("queues requests beyond the running-sequence limit, counting every choice", async () => {
    const core = await makeCore({ maxRunningSequences: 3 });
    core.submit(request("a", prompt(4), greedy(4)));
    core.submit(request("b", prompt(4), { temperature: 1, n: 2, maxTokens: 4, ignoreEos: true }));
    core.submit(request("c", prompt(4), greedy(4)));
    await core.step();
    expect(core.stats()).toMatchObject({ runningRequests: 2, waitingRequests: 1 });
    const results = await runCore(core);
    for (const id of ["a", "b", "c"]) expect(finishOf(results.get(id)!.events)).toMatchObject({ finishReason: "length" });
  });

  it("spends at most maxTokensPerStep tokens per step, decoding sequences first", async () => {
    const core = await makeCore({ maxTokensPerStep: 8, maxRunningSequences: 2 });
    core.submit(request("short", prompt(3), greedy(20)));
    await core.step();
    core.submit(request("long", prompt(30, 7), greedy(2)));
    const results = new Map<string, RequestResult>();
    let steps = 0;
    while (!startedOf(results.get("long")?.events ?? [])) {
      await core.step();
      collectUpdates(core, results);
      steps++;
      // The decoding stream gets a token on every step while the long prompt runs in chunks of 7.
      expect(choiceIds(results.get("short")!.events)).toHaveLength(1 + steps);
    }
    expect(steps).toBe(Math.ceil(30 / 7));
    expect(startedOf(results.get("long")!.events)!.cachedTokens).toBe(0);
  });
});

describe.each(testKernelBackends())("preemption, %s kernels", (backend) => {
  const model = loadTinyModel("qwen2", {}, backend);

  it("preempts the latest request when KV runs out, and it resumes with the same output and logprobs", async () => {
    const prompts = [prompt(12), prompt(12, 5), prompt(12, 9)];
    const expected = prompts.map((p) => greedyReference(model.transformer, p, 16));
    const seeded = { temperature: 0.9, seed: 4, n: 2, maxTokens: 16, ignoreEos: true, logprobs: 1 };
    const aloneCore = await makeCore({}, model);
    aloneCore.submit(request("seeded", prompt(10, 2), seeded));
    const alone = (await runCore(aloneCore)).get("seeded")!.events;

    // 512 bytes per position: room for about 64 positions, far less than the four requests need together.
    const core = await makeCore({ kvCacheBytes: 64 * 512, maxRunningSequences: 8 }, model);
    prompts.forEach((p, i) => core.submit(request(`r${i}`, p, greedy(16))));
    core.submit(request("seeded", prompt(10, 2), seeded));
    const results = await runCore(core);
    expect(core.stats().preemptions).toBeGreaterThan(0);
    prompts.forEach((_, i) => expect(choiceIds(results.get(`r${i}`)!.events)).toEqual(expected[i]));
    for (const index of [0, 1]) expect(choiceTokens(results.get("seeded")!.events, index)).toEqual(choiceTokens(alone, index));
    expect(core.stats()).toMatchObject({ runningRequests: 0, kvCacheBytes: 0 });
  });
});

describe("cancellation", () => {
  it("ends a running request with abort at the next step and frees its KV", async () => {
    const core = await makeCore({});
    core.submit(request("a", prompt(6), { ...greedy(50), n: 1, stop: ["zzzzzzzz"] }));
    // ignoreEos: an unseeded sample may draw the end token within four steps and finish with stop before the cancel.
    core.submit(request("b", prompt(6), { temperature: 1, n: 2, maxTokens: 50, ignoreEos: true }));
    const results = new Map<string, RequestResult>();
    for (let i = 0; i < 4; i++) {
      await core.step();
      collectUpdates(core, results);
    }
    expect(core.stats().kvCacheBytes).toBeGreaterThan(0);
    core.cancel("a");
    core.cancel("b");
    await runCore(core, results);
    const a = results.get("a")!.events;
    expect(finishOf(a)).toEqual({ type: "finished", index: 0, finishReason: "abort", stopReason: null });
    expect(choiceIds(a)).toHaveLength(4);
    // Text held back for the stop string comes out with the abort (an unfinished character at the end is dropped).
    const last = a.filter((event) => event.type === "output").at(-1)!;
    expect(last).toMatchObject({ tokens: [] });
    expect(a.map((event) => (event.type === "output" ? event.text : "")).join("")).toBe(model.tokenizer.decode(choiceIds(a)).replace(/\uFFFD+$/, ""));
    for (const index of [0, 1]) expect(finishOf(results.get("b")!.events, index)).toMatchObject({ finishReason: "abort" });
    expect(core.stats()).toMatchObject({ runningRequests: 0, waitingRequests: 0, kvCacheBytes: 0 });
  });

  it("ends a request that never started with started, then abort for each choice", async () => {
    const core = await makeCore({ maxRunningSequences: 1 });
    core.submit(request("running", prompt(4), greedy(5)));
    core.submit(request("waiting", prompt(4), { temperature: 1, n: 1, maxTokens: 5 }));
    await core.step();
    core.cancel("waiting");
    const results = await runCore(core);
    expect(results.get("waiting")!.events).toEqual([
      { type: "started", promptTokenIds: prompt(4), cachedTokens: 0, promptLogprobs: null },
      { type: "finished", index: 0, finishReason: "abort", stopReason: null },
    ]);
    expect(finishOf(results.get("running")!.events)).toMatchObject({ finishReason: "length" });
  });
});
