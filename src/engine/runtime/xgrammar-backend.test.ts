import { describe, expect, it } from "vitest";
import { choiceIds, choiceText, finishOf, runCore } from "../../testing/engine.js";
import { loadTinyModel } from "../../testing/models.js";
import { defaultSamplingParams, type SamplingParams } from "../sampling/params.js";
import type { StructuredConstraint } from "../structured/types.js";
import { EngineCore } from "./engine-core.js";
import type { WireGenerateRequest } from "./intake.js";
import { resolveSchedulerOptions } from "./options.js";
import { xgrammarBackend } from "./xgrammar-backend.js";

const model = loadTinyModel("qwen2");
const prompt = model.tokenizer.encode("Reply:");
const backend = await xgrammarBackend(model);

async function run(constraint: StructuredConstraint, params: Partial<SamplingParams>, extra: Partial<WireGenerateRequest> = {}) {
  const core = new EngineCore({ model, scheduler: resolveSchedulerOptions({}), constraints: backend });
  core.submit({ requestId: "r", promptTokenIds: prompt, params: defaultSamplingParams({ maxTokens: 24, ...params }), constraint, ...extra });
  const result = (await runCore(core)).get("r")!;
  expect(result.error).toBeUndefined();
  return result.events;
}

describe("xgrammar structured outputs in the engine", () => {
  const choices = ["red", "green", "light blue"];

  it("keeps sampled choices and beams inside the grammar, ending on an EOS id", async () => {
    for (const params of [{ temperature: 0 }, { temperature: 1, seed: 2, n: 3 }, { useBeamSearch: true, n: 3, temperature: 0 }]) {
      const events = await run({ kind: "choice", choices }, params);
      for (let index = 0; index < (params.n ?? 1); index++) {
        expect(choices).toContain(choiceText(events, index));
        expect(finishOf(events, index)).toMatchObject({ finishReason: "stop" });
      }
    }
  });

  it("produces JSON that matches the schema", async () => {
    const schema = { type: "object", properties: { n: { type: "integer", minimum: 1, maximum: 9 } }, required: ["n"] };
    const events = await run({ kind: "json_schema", schema, options: { disableAnyWhitespace: true } }, { temperature: 1, seed: 8, n: 3 });
    for (const index of [0, 1, 2]) {
      const value = JSON.parse(choiceText(events, index)) as { n: number };
      expect(Number.isInteger(value.n) && value.n >= 1 && value.n <= 9).toBe(true);
    }
  });

  it("starts the grammar after constraintStartsAfterTokenId", async () => {
    const thinkEnd = model.tokenizer.tokenId("</think>")!;
    const events = await run({ kind: "choice", choices }, { temperature: 0, logitBias: new Map([[thinkEnd, 100]]) }, { constraintStartsAfterTokenId: thinkEnd });
    const ids = choiceIds(events);
    expect(ids[0]).toBe(thinkEnd);
    expect(choices).toContain(model.tokenizer.decode(ids.slice(1, -1)));
  });

  it("refuses constraints xgrammar cannot enforce as the request's fault", async () => {
    await expect(backend.check({ kind: "regex", pattern: "(" })).rejects.toMatchObject({ kind: "invalid_request", message: expect.stringMatching(/^Failed to transform regex into a grammar/) });
    await expect(backend.check({ kind: "grammar", grammar: "root ::= missing" })).rejects.toMatchObject({ kind: "invalid_request" });
  });
});
