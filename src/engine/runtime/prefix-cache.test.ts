import { describe, expect, it } from "vitest";
import { choiceIds, choiceTokens, greedyReference, RankOneAdapter, runCore, startedOf } from "../../testing/engine.js";
import { testKernelBackends } from "../../testing/kernel-backends.js";
import { loadTinyModel } from "../../testing/models.js";
import { SeededRandom } from "../fixtures/random.js";
import { KvCache } from "../model/kv-cache.js";
import { defaultSamplingParams } from "../sampling/params.js";
import { EngineCore } from "./engine-core.js";
import type { WireGenerateRequest } from "./intake.js";
import { resolveSchedulerOptions, type SchedulerOptions } from "./options.js";
import { PrefixCache, prefixNamespace } from "./prefix-cache.js";
import { noConstraintBackend } from "./seams.js";

/** A cache of `length` positions whose values encode (seed, position), so copies can be checked. */
function filledCache(length: number, seed: number): KvCache {
  const cache = new KvCache(1, 2, 4096, length);
  for (let p = 0; p < length; p++) cache.keys[0]!.set([seed, p], p * 2);
  cache.length = length;
  return cache;
}

describe("PrefixCache", () => {
  const ns = prefixNamespace(undefined, undefined);

  it("finds the longest shared prefix, capped, and hands out a copy", () => {
    const cache = new PrefixCache(1 << 20);
    cache.insert(ns, [1, 2, 3, 4, 5], filledCache(5, 7));
    const hit = cache.lookup(ns, [1, 2, 3, 9], 10)!;
    expect(hit.length).toBe(3);
    expect(hit.cache.length).toBe(3);
    expect(Array.from(hit.cache.keys[0]!.subarray(0, 6))).toEqual([7, 0, 7, 1, 7, 2]);
    hit.cache.keys[0]![0] = -1;
    expect(cache.lookup(ns, [1, 2, 3, 4, 5, 6], 4)!.cache.keys[0]![0]).toBe(7);
    expect(cache.lookup(ns, [1, 2, 3, 4, 5, 6], 4)!.length).toBe(4);
    expect(cache.lookup(ns, [2, 3], 10)).toBeNull();
  });

  it("keeps namespaces (adapter, cache_salt) apart", () => {
    const cache = new PrefixCache(1 << 20);
    cache.insert(prefixNamespace("adapter-1", undefined), [1, 2, 3], filledCache(3, 1));
    cache.insert(prefixNamespace(undefined, "salt"), [1, 2, 3], filledCache(3, 2));
    expect(cache.lookup(ns, [1, 2, 3, 4], 3)).toBeNull();
    expect(cache.lookup(prefixNamespace("adapter-1", undefined), [1, 2, 3, 4], 3)!.cache.keys[0]![0]).toBe(1);
    expect(cache.lookup(prefixNamespace(undefined, "salt"), [1, 2, 3, 4], 3)!.cache.keys[0]![0]).toBe(2);
    expect(cache.lookup(prefixNamespace("adapter-1", "salt"), [1, 2, 3, 4], 3)).toBeNull();
  });

  it("replaces entries a longer sequence covers, and skips sequences already covered", () => {
    const cache = new PrefixCache(1 << 20);
    expect(cache.insert(ns, [1, 2], filledCache(2, 1))).toBe(true);
    expect(cache.insert(ns, [1, 2, 3, 4], filledCache(4, 2))).toBe(true);
    expect(cache.size).toBe(1);
    expect(cache.insert(ns, [1, 2, 3], filledCache(3, 3))).toBe(false);
    expect(cache.size).toBe(1);
    expect(cache.insert(ns, [1, 2, 5], filledCache(3, 4))).toBe(true);
    expect(cache.size).toBe(2);
  });

  it("stays within its byte budget, dropping the least recently used entries", () => {
    const entryBytes = filledCache(4, 0).byteSize;
    const cache = new PrefixCache(2 * entryBytes);
    cache.insert(ns, [1, 1, 1, 1], filledCache(4, 1));
    cache.insert(ns, [2, 2, 2, 2], filledCache(4, 2));
    cache.lookup(ns, [1, 1, 1, 1], 3); // entry 1 is now the most recently used
    cache.insert(ns, [3, 3, 3, 3], filledCache(4, 3));
    expect(cache.bytes).toBeLessThanOrEqual(2 * entryBytes);
    expect(cache.lookup(ns, [2, 2, 2, 2], 3)).toBeNull();
    expect(cache.lookup(ns, [1, 1, 1, 1], 3)).not.toBeNull();
    expect(cache.lookup(ns, [3, 3, 3, 3], 3)).not.toBeNull();
    expect(cache.insert(ns, [9, 9, 9, 9, 9, 9, 9, 9, 9], filledCache(9, 9))).toBe(false);
  });
});

describe.each(testKernelBackends())("prefix reuse in the engine, %s kernels", (backend) => {
  const model = loadTinyModel("qwen2", {}, backend);
  const prompt = model.tokenizer.encode("You are a helpful assistant. Answer briefly: what is the capital of France?");
  const greedy = { temperature: 0, maxTokens: 6, ignoreEos: true };
  const random = new SeededRandom(3);
  const { hiddenSize, numHeads, headDim } = model.config;
  const adapter = new RankOneAdapter(0, "q_proj", random.uniform(numHeads * headDim, 0.5), random.uniform(hiddenSize, 0.5));

  async function core(options: Partial<SchedulerOptions> = {}): Promise<EngineCore> {
    return new EngineCore({ model, scheduler: resolveSchedulerOptions(options), constraints: await noConstraintBackend(model), adapterLoader: () => adapter });
  }

  async function run(engine: EngineCore, wire: Omit<WireGenerateRequest, "params"> & { params?: Partial<WireGenerateRequest["params"]> }) {
    engine.submit({ ...wire, params: defaultSamplingParams({ ...greedy, ...wire.params }) });
    const { events, error } = (await runCore(engine)).get(wire.requestId)!;
    expect(error).toBeUndefined();
    return { cached: startedOf(events)!.cachedTokens, ids: choiceIds(events), tokens: choiceTokens(events) };
  }

  it("reports reused prompt tokens as cached and produces the same tokens with bit-identical logprobs", async () => {
    const engine = await core();
    const expected = greedyReference(model.transformer, prompt, 6);
    const first = await run(engine, { requestId: "first", promptTokenIds: prompt, params: { logprobs: 3 } });
    expect(first).toMatchObject({ cached: 0, ids: expected });
    // The whole prompt is cached; its last token runs again for the logits.
    const again = await run(engine, { requestId: "again", promptTokenIds: prompt, params: { logprobs: 3 } });
    expect(again).toMatchObject({ cached: prompt.length - 1, ids: expected });
    expect(again.tokens).toEqual(first.tokens);
    // A follow-up turn reuses the prompt and the reply so far (all but the reply's last token, which never ran).
    const followUp = [...prompt, ...expected, ...model.tokenizer.encode(" And of Spain?")];
    const reused = await run(engine, { requestId: "turn-2", promptTokenIds: followUp, params: { logprobs: 3 } });
    expect(reused).toMatchObject({ cached: prompt.length + 5, ids: greedyReference(model.transformer, followUp, 6) });
    const fresh = await run(await core({ prefixCacheBytes: 0 }), { requestId: "turn-2-fresh", promptTokenIds: followUp, params: { logprobs: 3 } });
    expect(fresh.cached).toBe(0);
    expect(reused.tokens).toEqual(fresh.tokens);
    expect(engine.stats().prefixCacheEntries).toBeGreaterThan(0);
  });

  it("never shares KV across cache salts or adapters", async () => {
    const engine = await core();
    await run(engine, { requestId: "plain", promptTokenIds: prompt });
    expect((await run(engine, { requestId: "salted", promptTokenIds: prompt, cacheSalt: "tenant-a" })).cached).toBe(0);
    expect((await run(engine, { requestId: "salted-2", promptTokenIds: prompt, cacheSalt: "tenant-a" })).cached).toBe(prompt.length - 1);
    expect((await run(engine, { requestId: "other-salt", promptTokenIds: prompt, cacheSalt: "tenant-b" })).cached).toBe(0);

    const ref = { id: "checkpoint-1", dir: "/unused" };
    const withAdapter = greedyReference(model.transformer, prompt, 6, adapter);
    expect(withAdapter).not.toEqual(greedyReference(model.transformer, prompt, 6));
    expect(await run(engine, { requestId: "adapted", promptTokenIds: prompt, adapter: ref })).toMatchObject({ cached: 0, ids: withAdapter });
    expect(await run(engine, { requestId: "adapted-2", promptTokenIds: prompt, adapter: ref })).toMatchObject({ cached: prompt.length - 1, ids: withAdapter });
    expect((await run(engine, { requestId: "plain-2", promptTokenIds: prompt })).ids).toEqual(greedyReference(model.transformer, prompt, 6));
  });

  it("does not read cached KV for prompt logprobs, and not at all when disabled", async () => {
    const engine = await core();
    await run(engine, { requestId: "warm", promptTokenIds: prompt });
    expect((await run(engine, { requestId: "logprobs", promptTokenIds: prompt, params: { promptLogprobs: 0 } })).cached).toBe(0);
    const disabled = await core({ prefixCacheBytes: 0 });
    await run(disabled, { requestId: "a", promptTokenIds: prompt });
    expect((await run(disabled, { requestId: "b", promptTokenIds: prompt })).cached).toBe(0);
    expect(disabled.stats().prefixCacheBytes).toBe(0);
  });
});
