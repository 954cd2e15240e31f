import { describe, expect, it } from "vitest";
import { ChoiceConstraintBackend, choiceIds, choiceText, choiceTokens, finishOf, runCore, startedOf } from "../../testing/engine.js";
import { loadTinyModel } from "../../testing/models.js";
import { BeamSearch, type BeamResult } from "../sampling/beam-search.js";
import type { StructuredConstraint } from "../structured/types.js";
import { defaultSamplingParams, type SamplingParams } from "../sampling/params.js";
import { EngineCore } from "./engine-core.js";
import { resolveSchedulerOptions, type SchedulerOptions } from "./options.js";

const model = loadTinyModel("qwen2");
const { transformer } = model;
const vocab = model.config.vocabSize;
const prompt = model.tokenizer.encode("Beam search keeps the best few");

/** Beam search with every beam's logits from a full forward pass of its whole sequence: no KV reuse at all. */
function reference(width: number, maxTokens: number, lengthPenalty = 1): BeamResult[] {
  const search = new BeamSearch({ width, maxTokens, lengthPenalty, promptLength: prompt.length, eosTokenIds: model.eosTokenIds, ignoreEos: false, includeStopStrInOutput: false, logprobs: null });
  while (!search.done) {
    search.step(
      search.live.map((beam) => {
        const sequence = [...prompt, ...beam.tokenIds];
        return transformer.logitsOf(sequence).subarray((sequence.length - 1) * vocab);
      }),
    );
  }
  return search.results();
}

async function run(params: Partial<SamplingParams>, options: Partial<SchedulerOptions> = {}, extra: { constraint?: StructuredConstraint } = {}) {
  const core = new EngineCore({ model, scheduler: resolveSchedulerOptions(options), constraints: new ChoiceConstraintBackend(model.tokenizer, vocab, model.eosTokenIds) });
  core.submit({ requestId: "neighbour", promptTokenIds: prompt.slice(2), params: defaultSamplingParams({ temperature: 0, maxTokens: 20, ignoreEos: true }) });
  core.submit({ requestId: "beam", promptTokenIds: prompt, params: defaultSamplingParams({ useBeamSearch: true, temperature: 0, ...params }), ...extra });
  const result = (await runCore(core)).get("beam")!;
  expect(result.error).toBeUndefined();
  preemptions = core.stats().preemptions;
  return result.events;
}

let preemptions = 0;

describe("beam search in the engine", () => {
  it("returns the same beams as a search over full forward passes, best first", async () => {
    for (const [width, maxTokens, lengthPenalty] of [
      [1, 6, 1],
      [3, 7, 1],
      [4, 5, 0.5],
    ] as const) {
      const expected = reference(width, maxTokens, lengthPenalty);
      const events = await run({ n: width, maxTokens, lengthPenalty }, { maxTokensPerStep: 5, maxRunningSequences: 5 });
      expect(startedOf(events)!.promptTokenIds).toEqual(prompt);
      expected.forEach((result, index) => {
        expect(choiceIds(events, index)).toEqual(result.tokenIds);
        expect(choiceText(events, index)).toBe(model.tokenizer.decode(result.textTokenIds));
        expect(finishOf(events, index)).toMatchObject({ finishReason: result.finish.finishReason, stopReason: result.finish.stopReason });
        choiceTokens(events, index).forEach((token, i) => expect(token.logprob).toBeCloseTo(result.tokens[i]!.logprob, 5));
      });
    }
  });

  it("sends every result at the end, in one go", async () => {
    const events = await run({ n: 2, maxTokens: 4 });
    expect(events.map((event) => event.type)).toEqual(["started", "output", "finished", "output", "finished"]);
  });

  it("survives preemption with the same beams", async () => {
    const expected = reference(3, 8);
    // About 96 positions of KV: the beams (18-token prompt) and their neighbour cannot all stay.
    const events = await run({ n: 3, maxTokens: 8 }, { kvCacheBytes: 96 * 512, maxRunningSequences: 4 });
    expect(preemptions).toBeGreaterThan(0);
    expected.forEach((result, index) => expect(choiceIds(events, index)).toEqual(result.tokenIds));
  });

  it("keeps every beam inside a structured-output constraint", async () => {
    const choices = ["maybe", "no way", "yes"];
    const events = await run({ n: 3, maxTokens: 12 }, {}, { constraint: { kind: "choice", choices } });
    for (const index of [0, 1, 2]) {
      expect(choices).toContain(choiceText(events, index));
      expect(finishOf(events, index)).toMatchObject({ finishReason: "stop" });
    }
  });
});
