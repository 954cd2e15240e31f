import { describe, expect, it } from "vitest";
import { runCore } from "../../testing/engine.js";
import { loadTinyModel } from "../../testing/models.js";
import { defaultSamplingParams, type SamplingParams } from "../sampling/params.js";
import { EngineCore } from "./engine-core.js";
import { EngineError } from "./errors.js";
import { checkRequest, type WireGenerateRequest } from "./intake.js";
import { resolveSchedulerOptions } from "./options.js";
import { noConstraintBackend } from "./seams.js";

const model = loadTinyModel("qwen2", { maxPositionEmbeddings: 32 });
const request = (promptTokenIds: number[], params: Partial<SamplingParams> = {}, extra: Partial<WireGenerateRequest> = {}): WireGenerateRequest => ({
  requestId: "r",
  promptTokenIds,
  params: defaultSamplingParams({ maxTokens: 4, ...params }),
  ...extra,
});

function refusal(wire: WireGenerateRequest): string {
  try {
    checkRequest(wire, model.config);
  } catch (error) {
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).kind).toBe("invalid_request");
    return (error as Error).message;
  }
  throw new Error("the request was accepted");
}

describe("checkRequest", () => {
  it("truncates and bounds the output by the context", () => {
    expect(checkRequest(request([1, 2, 3, 4, 5], { truncatePromptTokens: 2 }), model.config)).toEqual({ prompt: [4, 5], maxTokens: 4 });
    expect(checkRequest(request(Array(30).fill(7), { maxTokens: 100 }), model.config)).toEqual({ prompt: Array(30).fill(7), maxTokens: 2 });
    expect(checkRequest(request(Array(40).fill(7), { maxTokens: 10, truncatePromptTokens: -1 }), model.config).prompt).toHaveLength(22);
  });

  it("refuses what the model cannot run", () => {
    expect(refusal(request([1, model.config.vocabSize]))).toMatch(/token id \d+ is outside the model's vocabulary/);
    expect(refusal(request([1, 2.5]))).toMatch(/token id 2.5/);
    expect(refusal(request([]))).toBe("The decoder prompt cannot be empty");
    expect(refusal(request([1, 2], { truncatePromptTokens: 0 }))).toBe("The decoder prompt cannot be empty");
    expect(refusal(request(Array(32).fill(1)))).toMatch(/leaves no room for output within the maximum model length of 32/);
    expect(refusal(request([1], { n: 0 }))).toMatch(/n must be a positive integer/);
    expect(refusal(request([1], { maxTokens: 0 }))).toMatch(/max_tokens must be at least 1/);
    expect(refusal({ ...request([1]), requestId: "" })).toMatch(/requestId/);
  });
});

describe("request errors in the engine", () => {
  it("ends a refused request with its error and no events, leaving the others running", async () => {
    const core = new EngineCore({ model, scheduler: resolveSchedulerOptions({}), constraints: await noConstraintBackend(model) });
    core.submit({ ...request([1, 999_999]), requestId: "bad" });
    core.submit({ ...request([1, 2], { temperature: 0 }), requestId: "good" });
    core.submit({ ...request([1, 2], { temperature: 0 }), requestId: "adapted", adapter: { id: "ckpt", dir: "/nowhere" } });
    const results = await runCore(core);
    expect(results.get("bad")).toEqual({ events: [], error: { kind: "invalid_request", message: expect.stringContaining("999999") } });
    expect(results.get("adapted")).toEqual({ events: [], error: { kind: "unsupported", message: expect.stringContaining("LoRA adapters are not available") } });
    expect(results.get("good")!.error).toBeUndefined();
    expect(results.get("good")!.events.at(-1)).toMatchObject({ type: "finished", finishReason: "length" });
  });
});
