import { describe, expect, it } from "vitest";
import { choiceIds, choiceText, choiceTokens, finishOf, greedyReference, runCore, startedOf, type RequestResult } from "../../testing/engine.js";
import { type KernelBackend, testKernelBackends } from "../../testing/kernel-backends.js";
import { loadTinyModel } from "../../testing/models.js";
import type { SampledToken } from "../api.js";
import type { Architecture } from "../checkpoint/model-config.js";
import type { LoadedModel } from "../model/load.js";
import { defaultSamplingParams, type SamplingParams } from "../sampling/params.js";
import { computePromptLogprobs } from "../sampling/prompt-logprobs.js";
import { EngineCore } from "./engine-core.js";
import type { WireGenerateRequest } from "./intake.js";
import { resolveSchedulerOptions, type SchedulerOptions } from "./options.js";
import { noConstraintBackend } from "./seams.js";

async function makeCore(model: LoadedModel, options: Partial<SchedulerOptions> = {}): Promise<EngineCore> {
  return new EngineCore({ model, scheduler: resolveSchedulerOptions(options), constraints: await noConstraintBackend(model) });
}

function request(requestId: string, promptTokenIds: number[], params: Partial<SamplingParams>, extra: Partial<WireGenerateRequest> = {}): WireGenerateRequest {
  return { requestId, promptTokenIds, params: defaultSamplingParams(params), ...extra };
}

const greedy = (maxTokens: number): Partial<SamplingParams> => ({ temperature: 0, maxTokens, ignoreEos: true });

/** Prompts of several lengths (1 to 40 tokens), from one text. */
function prompts(model: LoadedModel): number[][] {
  const text = model.tokenizer.encode("The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun by the river bank, dreaming of rabbits and bones.");
  return [1, 2, 7, 16, 23, 40].map((length) => Array.from({ length }, (_, i) => text[i % text.length]!));
}

async function runAlone(model: LoadedModel, wire: WireGenerateRequest, options: Partial<SchedulerOptions> = {}): Promise<RequestResult> {
  const core = await makeCore(model, options);
  core.submit(wire);
  return (await runCore(core)).get(wire.requestId)!;
}

const architectureBackends = (["qwen2", "llama"] as Architecture[]).flatMap((architecture) => testKernelBackends().map((backend): [Architecture, KernelBackend] => [architecture, backend]));

describe.each(architectureBackends)("EngineCore on %s, %s kernels", (architecture, backend) => {
  const model = loadTinyModel(architecture, {}, backend);

  it("decodes greedily exactly like the bare transformer, alone and in a batch, whatever the chunking, with bit-identical logprobs", async () => {
    const all = prompts(model);
    const expected = all.map((prompt) => greedyReference(model.transformer, prompt, 12));
    const alone: SampledToken[][] = [];
    for (const [i, prompt] of all.entries()) {
      alone.push(choiceTokens((await runAlone(model, request("a", prompt, { ...greedy(12), logprobs: 2 }))).events));
      expect(alone[i]!.map((token) => token.tokenId)).toEqual(expected[i]);
    }
    for (const maxTokensPerStep of [7, 16, 512]) {
      const core = await makeCore(model, { maxTokensPerStep, maxRunningSequences: 6 });
      all.forEach((prompt, i) => core.submit(request(`r${i}`, prompt, { ...greedy(12), logprobs: 2 })));
      const results = await runCore(core);
      // Same tokens, and the same logprobs to the last bit: every kernel computes rows independently of the batch.
      all.forEach((_, i) => expect(choiceTokens(results.get(`r${i}`)!.events), `prompt ${i}, ${maxTokensPerStep} tokens per step`).toEqual(alone[i]));
    }
  });
});

describe("EngineCore", () => {
  const model = loadTinyModel("qwen2");
  const prompt = prompts(model)[3]!;

  it("streams started, then outputs, then one finished per choice", async () => {
    const { events, error } = await runAlone(model, request("a", prompt, { temperature: 0, maxTokens: 5, logprobs: 2 }));
    expect(error).toBeUndefined();
    expect(events[0]).toEqual({ type: "started", promptTokenIds: prompt, cachedTokens: 0, promptLogprobs: null });
    const outputs = events.filter((event) => event.type === "output");
    expect(outputs).toHaveLength(5);
    for (const output of outputs) {
      expect(output.tokens).toHaveLength(1);
      expect(output.tokens[0]!.top).toHaveLength(2);
      expect(output.tokens[0]!.logprob).toBeLessThan(0);
    }
    expect(events.at(-1)).toEqual({ type: "finished", index: 0, finishReason: "length", stopReason: null });
    expect(choiceText(events)).toBe(model.tokenizer.decode(choiceIds(events)));
  });

  it("gives seeded choices their own reproducible streams (n > 1), alone or in a batch", async () => {
    const params = { temperature: 1, seed: 11, n: 3, maxTokens: 10, ignoreEos: true };
    const alone = (await runAlone(model, request("a", prompt, params))).events;
    const outputs = [0, 1, 2].map((index) => choiceIds(alone, index));
    expect(new Set(outputs.map((ids) => ids.join())).size).toBe(3);
    const core = await makeCore(model, { maxTokensPerStep: 9, maxRunningSequences: 4 });
    core.submit(request("other", prompts(model)[5]!, { temperature: 1, maxTokens: 6 }));
    core.submit(request("a", prompt, params));
    const batched = (await runCore(core)).get("a")!.events;
    expect([0, 1, 2].map((index) => choiceIds(batched, index))).toEqual(outputs);
    // Choice 2 of seed 11 is choice 0 of seed 13.
    const shifted = (await runAlone(model, request("b", prompt, { ...params, seed: 13, n: 1 }))).events;
    expect(choiceIds(shifted)).toEqual(outputs[2]);
  });

  it("stops on a stop token id and on a stop string", async () => {
    const reference = greedyReference(model.transformer, prompt, 8);
    const stopId = reference[4]!;
    const firstAt = reference.indexOf(stopId);
    const byId = (await runAlone(model, request("a", prompt, { ...greedy(8), stopTokenIds: [stopId] }))).events;
    expect(choiceIds(byId)).toEqual(reference.slice(0, firstAt + 1));
    expect(finishOf(byId)).toMatchObject({ finishReason: "stop", stopReason: stopId });

    const fullText = model.tokenizer.decode(reference);
    const stop = fullText.slice(3, 6);
    const byString = (await runAlone(model, request("b", prompt, { ...greedy(8), stop: [stop] }))).events;
    expect(finishOf(byString)).toMatchObject({ finishReason: "stop", stopReason: stop });
    expect(choiceText(byString)).toBe(fullText.slice(0, fullText.indexOf(stop)));
  });

  it("ends on the model's EOS ids (generation_config.json) unless ignore_eos", async () => {
    // Make the model's second EOS id (from generation_config.json) the only allowed token after one step.
    const [eos, extraEos] = model.eosTokenIds;
    const logitBias = new Map([[extraEos!, 100]]);
    const { events } = await runAlone(model, request("a", prompt, { temperature: 0, maxTokens: 5, logitBias }));
    expect(choiceIds(events)).toEqual([extraEos]);
    expect(finishOf(events)).toMatchObject({ finishReason: "stop", stopReason: extraEos });
    const ignoring = (await runAlone(model, request("b", prompt, { temperature: 0, maxTokens: 3, logitBias, ignoreEos: true }))).events;
    expect(choiceIds(ignoring)).toEqual([extraEos, extraEos, extraEos]);
    expect(finishOf(ignoring)).toMatchObject({ finishReason: "length" });
    expect(eos).toBe(model.tokenizer.eosTokenId);
  });

  it("computes prompt logprobs equal to the full forward pass, across prefill chunks", async () => {
    const vocab = model.config.vocabSize;
    const full = model.transformer.logitsOf(prompt);
    const expected = computePromptLogprobs(prompt, (j) => full.subarray(j * vocab, (j + 1) * vocab), 3);
    for (const maxTokensPerStep of [5, 512]) {
      const { events } = await runAlone(model, request("a", prompt, { ...greedy(2), promptLogprobs: 3 }), { maxTokensPerStep, maxRunningSequences: 4 });
      const started = startedOf(events)!;
      expect(started.promptLogprobs).toHaveLength(prompt.length);
      started.promptLogprobs!.forEach((entry, j) => {
        if (j === 0) return expect(entry).toBeNull();
        expect(entry!.actual.tokenId).toBe(expected[j]!.actual.tokenId);
        expect(entry!.actual.rank).toBe(expected[j]!.actual.rank);
        expect(entry!.actual.logprob).toBeCloseTo(expected[j]!.actual.logprob, 5);
        expect(entry!.top.map((alt) => alt.tokenId)).toEqual(expected[j]!.top.map((alt) => alt.tokenId));
      });
    }
  });

  it("truncates the prompt to its last tokens (truncate_prompt_tokens)", async () => {
    const { events } = await runAlone(model, request("a", prompt, { ...greedy(3), truncatePromptTokens: 4 }));
    expect(startedOf(events)!.promptTokenIds).toEqual(prompt.slice(-4));
    expect(choiceIds(events)).toEqual(greedyReference(model.transformer, prompt.slice(-4), 3));
    // -1 keeps what fits next to max_tokens in the context (64 positions here).
    const short = loadTinyModel("qwen2", { maxPositionEmbeddings: 64 });
    const fitting = (await runAlone(short, request("b", prompt, { ...greedy(58), truncatePromptTokens: -1 }))).events;
    expect(startedOf(fitting)!.promptTokenIds).toEqual(prompt.slice(-6));
    expect(choiceIds(fitting)).toHaveLength(58);
  });
});
