import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { choiceIds, choiceText, finishOf, greedyReference, startedOf } from "../../testing/engine.js";
import { loadTinyModel, tinyModel } from "../../testing/models.js";
import type { GenerateEvent, GenerateRequest } from "../api.js";
import { defaultSamplingParams, type SamplingParams } from "../sampling/params.js";
import { EngineError } from "./errors.js";
import { LocalEngine } from "./local-engine.js";

const model = loadTinyModel("qwen2");
const prompt = model.tokenizer.encode("Threads keep the event loop free while the model computes.");

function request(requestId: string, params: Partial<SamplingParams>, extra: Partial<GenerateRequest> = {}): GenerateRequest {
  return { requestId, promptTokenIds: prompt, params: defaultSamplingParams(params), ...extra };
}

async function collect(events: AsyncIterable<GenerateEvent>): Promise<GenerateEvent[]> {
  const all: GenerateEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

/** Waits (without timing assumptions) until the engine thread reports what `until` wants. */
async function waitForStats(engine: LocalEngine, until: (stats: Awaited<ReturnType<LocalEngine["stats"]>>) => boolean): Promise<void> {
  while (!until(await engine.stats())) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("LocalEngine", () => {
  let engine: LocalEngine;
  beforeAll(async () => {
    engine = await LocalEngine.start({ id: "test/tiny", dir: tinyModel("qwen2").dir });
  });
  afterAll(() => engine.close());

  it("describes the model and holds its tokenizer on the calling thread", () => {
    expect(engine.info).toMatchObject({ id: "test/tiny", architecture: "qwen2", maxModelLen: 2048, eosTokenIds: model.eosTokenIds, priorityScheduling: false });
    expect(engine.tokenizer.encode("hello")).toEqual(model.tokenizer.encode("hello"));
  });

  it("streams the same greedy tokens as the bare transformer, alone and with concurrent requests", async () => {
    const expected = greedyReference(model.transformer, prompt, 10);
    const alone = await collect(engine.generate(request("alone", { temperature: 0, maxTokens: 10, ignoreEos: true })));
    expect(alone[0]).toEqual({ type: "started", promptTokenIds: prompt, cachedTokens: 0, promptLogprobs: null });
    expect(choiceIds(alone)).toEqual(expected);
    expect(alone.at(-1)).toEqual({ type: "finished", index: 0, finishReason: "length", stopReason: null });
    expect(choiceText(alone)).toBe(model.tokenizer.decode(expected));

    const concurrent = await Promise.all(Array.from({ length: 6 }, (_, i) => collect(engine.generate(request(`c${i}`, { temperature: 0, maxTokens: 10, ignoreEos: true }, { cacheSalt: `salt-${i}` })))));
    for (const events of concurrent) expect(choiceIds(events)).toEqual(expected);
  });

  it("cancels through the request's AbortSignal", async () => {
    const controller = new AbortController();
    const events: GenerateEvent[] = [];
    for await (const event of engine.generate(request("cancel-me", { temperature: 0, maxTokens: 1000, ignoreEos: true }, { signal: controller.signal }))) {
      events.push(event);
      if (event.type === "output" && choiceIds(events).length === 3) controller.abort();
    }
    expect(finishOf(events)).toEqual({ type: "finished", index: 0, finishReason: "abort", stopReason: null });
    expect(choiceIds(events).length).toBeLessThan(1000);
    await waitForStats(engine, (stats) => stats.runningRequests === 0);
    expect((await engine.stats()).kvCacheBytes).toBe(0);
  });

  it("cancels a request whose consumer stops reading", async () => {
    for await (const event of engine.generate(request("abandoned", { temperature: 0, maxTokens: 1000, ignoreEos: true }))) {
      if (event.type === "output") break;
    }
    await waitForStats(engine, (stats) => stats.runningRequests === 0 && stats.waitingRequests === 0);
  });

  it("ends a request with an already aborted signal at once", async () => {
    const events = await collect(engine.generate(request("pre-aborted", { temperature: 0, maxTokens: 1000 }, { signal: AbortSignal.abort() })));
    expect(finishOf(events)).toMatchObject({ finishReason: "abort" });
    expect(choiceIds(events).length).toBeLessThan(1000);
  });

  it("reports errors of the engine thread as errors of the stream", async () => {
    const stream = engine.generate({ ...request("bad", { maxTokens: 3 }), promptTokenIds: [1, 1_000_000] });
    await expect(collect(stream)).rejects.toMatchObject({ name: "EngineError", kind: "invalid_request", message: expect.stringContaining("1000000") });
    await expect(engine.checkConstraint({ kind: "regex", pattern: "a(" })).rejects.toMatchObject({ kind: "invalid_request", message: expect.stringContaining("Failed to transform regex into a grammar") });
    await expect(engine.checkConstraint({ kind: "regex", pattern: "a+" })).resolves.toBeUndefined();
  });

  it("refuses a request id that is already running", async () => {
    const first = engine.generate(request("twice", { temperature: 0, maxTokens: 20, ignoreEos: true }));
    await expect(collect(engine.generate(request("twice", { maxTokens: 2 })))).rejects.toThrow(/already running/);
    expect(choiceIds(await collect(first))).toHaveLength(20);
  });

  it("keeps constrained output inside its grammar (xgrammar in the engine thread)", async () => {
    const schema = { type: "object", properties: { answer: { enum: ["yes", "no"] } }, required: ["answer"] };
    const events = await collect(engine.generate(request("json", { temperature: 1, seed: 3, n: 2, maxTokens: 40 }, { constraint: { kind: "json_schema", schema, options: { disableAnyWhitespace: true } } })));
    for (const index of [0, 1]) {
      expect(["yes", "no"]).toContain(JSON.parse(choiceText(events, index)).answer);
      expect(finishOf(events, index)).toMatchObject({ finishReason: "stop" });
    }
  });

  it("reports reused prefixes as cached tokens", async () => {
    const params = { temperature: 0, maxTokens: 4, ignoreEos: true };
    await collect(engine.generate(request("warm", params, { cacheSalt: "reuse" })));
    const again = await collect(engine.generate(request("hit", params, { cacheSalt: "reuse" })));
    expect(startedOf(again)!.cachedTokens).toBe(prompt.length - 1);
  });
});

describe("LocalEngine failures", () => {
  it("fails the requests of a crashed engine thread and starts a new one for the next request", async () => {
    const engine = await LocalEngine.start({ id: "test/crash", dir: tinyModel("qwen2").dir });
    try {
      const events: GenerateEvent[] = [];
      const stream = engine.generate(request("victim", { temperature: 0, maxTokens: 100_000, ignoreEos: true }));
      const consumed = (async () => {
        for await (const event of stream) {
          events.push(event);
          if (event.type === "output" && choiceIds(events).length === 2) void engine.terminateThread();
        }
      })();
      await expect(consumed).rejects.toMatchObject({ kind: "worker_failed", message: expect.stringContaining("stopped: it was terminated") });
      const after = await collect(engine.generate(request("after", { temperature: 0, maxTokens: 3, ignoreEos: true })));
      expect(choiceIds(after)).toEqual(greedyReference(model.transformer, prompt, 3));
    } finally {
      await engine.close();
    }
  });

  it("fails to start on a model it cannot load, naming the problem", async () => {
    await expect(LocalEngine.start({ id: "missing", dir: "/nonexistent/model" })).rejects.toThrow(/config\.json/);
  });

  it("ends open streams with abort when closed, and refuses requests afterwards", async () => {
    const engine = await LocalEngine.start({ id: "test/close", dir: tinyModel("qwen2").dir });
    const events: GenerateEvent[] = [];
    const stream = engine.generate(request("open", { temperature: 0, maxTokens: 100_000, ignoreEos: true }));
    for await (const event of stream) {
      events.push(event);
      if (event.type === "output") break;
    }
    const running = collect(engine.generate(request("running", { temperature: 0, maxTokens: 100_000, ignoreEos: true })));
    await waitForStats(engine, (stats) => stats.runningRequests > 0);
    await engine.close();
    expect(finishOf(await running)).toMatchObject({ finishReason: "abort" });
    await expect(collect(engine.generate(request("late", { maxTokens: 2 })))).rejects.toBeInstanceOf(EngineError);
  });
});

describe("priority scheduling through the engine thread", () => {
  it("admits waiting requests by priority", async () => {
    const engine = await LocalEngine.start({ id: "test/priority", dir: tinyModel("qwen2").dir, scheduler: { priorityScheduling: true, maxRunningSequences: 1 } });
    try {
      expect(engine.info.priorityScheduling).toBe(true);
      const blocker = new AbortController();
      const order: string[] = [];
      const run = (id: string, priority: number, signal?: AbortSignal) =>
        collect(engine.generate(request(id, { temperature: 0, maxTokens: id === "blocker" ? 100_000 : 2, ignoreEos: true }, { priority, ...(signal ? { signal } : {}) }))).then((events) => {
          if (startedOf(events)) order.push(id);
          return events;
        });
      const blocking = run("blocker", 0, blocker.signal);
      await waitForStats(engine, (stats) => stats.runningRequests === 1);
      const others = [run("p7", 7), run("p2", 2), run("p-1", -1), run("p2-later", 2)];
      await waitForStats(engine, (stats) => stats.waitingRequests === 4);
      blocker.abort();
      await Promise.all([blocking, ...others]);
      expect(order).toEqual(["blocker", "p-1", "p2", "p2-later", "p7"]);
    } finally {
      await engine.close();
    }
  });
});
