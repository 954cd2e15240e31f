import { describe, expect, it } from "vitest";
import { ChoiceConstraintBackend, choiceIds, choiceText, finishOf, runCore } from "../../testing/engine.js";
import { loadTinyModel } from "../../testing/models.js";
import { defaultSamplingParams, type SamplingParams } from "../sampling/params.js";
import type { StructuredConstraint } from "../structured/types.js";
import { EngineCore } from "./engine-core.js";
import type { WireGenerateRequest } from "./intake.js";
import { resolveSchedulerOptions } from "./options.js";
import { type ConstraintBackend, noConstraintBackend } from "./seams.js";

const model = loadTinyModel("qwen2");
const prompt = model.tokenizer.encode("Answer with one word:");
const choices = ["yes", "no", "maybe later"];
const constraint: StructuredConstraint = { kind: "choice", choices };

async function run(params: Partial<SamplingParams>, extra: Partial<WireGenerateRequest> = {}, constraints?: ConstraintBackend) {
  const backend = constraints ?? new ChoiceConstraintBackend(model.tokenizer, model.config.vocabSize, model.eosTokenIds);
  const core = new EngineCore({ model, scheduler: resolveSchedulerOptions({}), constraints: backend });
  core.submit({ requestId: "r", promptTokenIds: prompt, params: defaultSamplingParams({ maxTokens: 16, ...params }), constraint, ...extra });
  return (await runCore(core)).get("r")!;
}

describe("structured outputs in sampling requests", () => {
  it("masks every choice's tokens with its own grammar state until the grammar's stop token", async () => {
    for (const params of [{ temperature: 0 }, { temperature: 1, n: 4, seed: 9 }]) {
      const { events, error } = await run(params);
      expect(error).toBeUndefined();
      for (let index = 0; index < (params.n ?? 1); index++) {
        expect(choices).toContain(choiceText(events, index));
        const finish = finishOf(events, index)!;
        expect(finish.finishReason).toBe("stop");
        expect(model.eosTokenIds).toContain(choiceIds(events, index).at(-1));
      }
    }
  });

  it("starts the grammar after constraintStartsAfterTokenId", async () => {
    const thinkEnd = model.tokenizer.tokenId("</think>")!;
    // The bias makes `</think>` the first token; afterwards the grammar forbids it.
    const { events } = await run({ temperature: 0, logitBias: new Map([[thinkEnd, 100]]) }, { constraintStartsAfterTokenId: thinkEnd });
    const ids = choiceIds(events);
    expect(ids[0]).toBe(thinkEnd);
    expect(choices).toContain(model.tokenizer.decode(ids.slice(1, -1)));
  });

  it("fails the request clearly when no structured-output backend is installed", async () => {
    const { events, error } = await run({ temperature: 0 }, {}, await noConstraintBackend(model));
    expect(error).toEqual({ kind: "unsupported", message: expect.stringContaining("Structured outputs are not available") });
    expect(events.filter((event) => event.type === "output")).toEqual([]);
  });
});
