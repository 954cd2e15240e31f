import { describe, expect, it } from "vitest";
import type { ModelInfo } from "../../../engine/api.js";
import { asyncApiErrorOf, byteModel, chatRequest, renderWithJinja } from "../../../testing/chat.js";
import type { ResolvedModel } from "../models/model-resolver.js";
import { planCompletion } from "./prepare.js";

const base: ResolvedModel = { baseModelId: "test/base", responseModel: "test/base", trained: false };
const trained: ResolvedModel = {
  baseModelId: "test/base",
  responseModel: "wandb-artifact:///alice/proj/agent:step2",
  trained: true,
  adapter: { id: "ckpt-2", dir: "/adapters/ckpt-2" },
};

function plan(fields: Record<string, unknown>, model: ResolvedModel = base, info: Partial<ModelInfo> = {}, headerRequestId?: string) {
  const { info: modelInfo, tokenizer } = byteModel(info);
  return planCompletion(chatRequest(fields), { model, info: modelInfo, tokenizer }, { render: renderWithJinja, headerRequestId });
}

describe("planning a completion", () => {
  it("renders, tokenizes and budgets the prompt for the engine", async () => {
    const { tokenizer } = byteModel();
    const planned = await plan({ max_completion_tokens: 10, seed: 3 });
    expect(tokenizer.decode(planned.generate.promptTokenIds)).toBe("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    expect(planned.generate.params).toMatchObject({ maxTokens: 10, seed: 3, logprobs: null, skipSpecialTokens: true });
    expect(planned.generate).not.toHaveProperty("adapter");
    expect(planned.plan).toMatchObject({ model: "test/base", role: "assistant", n: 1, echo: null, logprobs: false, returnTokenIds: false });
    expect(planned.plan.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(planned.generate.requestId.startsWith(`${planned.plan.id}-`)).toBe(true);
    expect(planned.stream).toBe(false);
    expect(planned.plan.systemFingerprint).toMatch(/^flywheel-\d+\.\d+\.\d+-[0-9a-f]{8}$/);
  });

  it("names the completion from X-Request-Id, else request_id", async () => {
    expect((await plan({ request_id: "body-id" }, base, {}, "header-id")).plan.id).toBe("chatcmpl-header-id");
    expect((await plan({ request_id: "body-id" })).plan.id).toBe("chatcmpl-body-id");
  });

  it("defaults trained models to token-id logprobs and passes their adapter", async () => {
    const planned = await plan({}, trained);
    expect(planned.plan).toMatchObject({ model: trained.responseModel, logprobs: true });
    expect(planned.generate.params.logprobs).toBe(0);
    expect(planned.generate.adapter).toEqual(trained.adapter);
    expect(planned.plan.formatter.entries([{ tokenId: 104, logprob: -1 }])[0]!.token).toBe("token_id:104");
    const optedOut = await plan({ logprobs: false, return_tokens_as_token_ids: false }, trained);
    expect(optedOut.generate.params.logprobs).toBeNull();
    expect(optedOut.plan.formatter.entries([{ tokenId: 104, logprob: -1 }])[0]!.token).toBe("h");
    expect((await plan({})).generate.params.logprobs).toBeNull();
  });

  it("refuses priority unless the model schedules by priority", async () => {
    expect(await asyncApiErrorOf(() => plan({ priority: 5 }))).toMatchObject({ status: 400, param: "priority", message: "Got priority 5 but Priority scheduling is not enabled." });
    expect((await plan({ priority: -3 }, base, { priorityScheduling: true })).generate.priority).toBe(-3);
    expect((await plan({})).generate.priority).toBe(0);
  });

  it("plans tool calls: Hermes parsing for auto, a schema for forced choices, special tokens kept", async () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }];
    const auto = await plan({ tools });
    expect(auto.plan.output.toolChoice).toEqual({ kind: "auto" });
    expect(auto.generate.params.skipSpecialTokens).toBe(false);
    expect(auto.generate).not.toHaveProperty("constraint");
    const named = await plan({ tools, tool_choice: { type: "function", function: { name: "get_weather" } } });
    expect(named.generate.constraint).toEqual({ kind: "json_schema", schema: { type: "object" } });
    const none = await plan({ tools, tool_choice: "none" });
    expect(none.generate.params.skipSpecialTokens).toBe(true);
  });

  it("reads reasoning from the prompt and gates a constraint behind </think> when the template opened it", async () => {
    const opened = "{{- '<|im_start|>assistant\\n<think>\\n' }}";
    const planned = await plan({ chat_template: opened, response_format: { type: "json_object" } });
    expect(planned.plan.output.reasoning).toBe("reasoning");
    expect(planned.generate.constraintStartsAfterTokenId).toBe(byteModel().tokenizer.tokenId("</think>"));
    const hidden = await plan({ chat_template: opened, response_format: { type: "json_object" }, include_reasoning: false });
    expect(hidden.generate).not.toHaveProperty("constraintStartsAfterTokenId");
    expect(hidden.plan.hideTokenMetadata).toBe(true);
    expect((await plan({})).plan.output.reasoning).toBe("undecided");
  });

  it("echoes the last message when it has the response role", async () => {
    const prefill = {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: ["Once", "upon"] },
      ],
      add_generation_prompt: false,
      continue_final_message: true,
    };
    expect((await plan({ ...prefill, echo: true })).plan).toMatchObject({ role: "assistant", echo: "Once\nupon" });
    expect((await plan({ echo: true })).plan.echo).toBe("");
    expect((await plan({ echo: true })).generate.params.promptLogprobs).toBe(0);
    expect((await plan({ echo: true, stream: true })).generate.params.promptLogprobs).toBeNull();
  });

  it("streams usage as asked", async () => {
    expect((await plan({ stream: true, stream_options: { include_usage: true, continuous_usage_stats: true } })).plan.streamUsage).toEqual({ include: true, continuous: true });
    expect((await plan({ stream: true, stream_options: { continuous_usage_stats: true } })).plan.streamUsage).toEqual({ include: false, continuous: false });
    expect((await plan({ stream: true })).stream).toBe(true);
  });

  it("caps the output by the context and generation_config", async () => {
    expect((await plan({}, base, { maxModelLen: 64 })).generate.params.maxTokens).toBe(64 - (await plan({})).generate.promptTokenIds.length);
    expect((await plan({}, base, { generationDefaults: { max_new_tokens: 7, temperature: 0.3 } })).generate.params).toMatchObject({ maxTokens: 7, temperature: 0.3 });
    expect((await asyncApiErrorOf(() => plan({ max_tokens: 300 }, base, { maxModelLen: 256 }))).param).toBe("max_tokens");
  });
});
