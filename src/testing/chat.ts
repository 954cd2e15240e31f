import { Template } from "@huggingface/jinja";
import type { GenerateEvent, ModelInfo, SampledToken } from "../engine/api.js";
import type { Tokenizer } from "../engine/tokenizer/types.js";
import type { CompletionPlan } from "../server/chat/pipeline/completion-plan.js";
import { LogprobFormatter } from "../server/chat/pipeline/logprobs.js";
import { ByteTokenizer } from "./byte-tokenizer.js";
import type { ChatTemplateInput, RenderedPrompt, TemplateModel } from "../server/chat/pipeline/template.js";
import { ApiError } from "../server/errors.js";
import { type ChatCompletionRequest, ChatCompletionReq } from "../server/chat/completions/protocol.js";
import { parseInput } from "../server/validation.js";

/** A parsed chat completion request: one user message plus the given fields, defaults filled by the real schema. */
export function chatRequest(fields: Record<string, unknown> = {}): ChatCompletionRequest {
  return parseInput(ChatCompletionReq, { messages: [{ role: "user", content: "hi" }], ...fields }, "body");
}

export interface ThrownApiError {
  status: number;
  message: string;
  param: string | null | undefined;
  type: string | undefined;
}

/** Runs `action` and returns the ApiError it throws (fails the test when it throws nothing or something else). */
export function apiErrorOf(action: () => unknown): ThrownApiError {
  try {
    action();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, message: error.message, param: error.options.param, type: error.options.type };
    throw error;
  }
  throw new Error("expected an ApiError, but nothing was thrown");
}

/** As `apiErrorOf`, for async actions. */
export async function asyncApiErrorOf(action: () => Promise<unknown>): Promise<ThrownApiError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, message: error.message, param: error.options.param, type: error.options.type };
    throw error;
  }
  throw new Error("expected an ApiError, but nothing was thrown");
}

/**
 * A plain @huggingface/jinja rendering for tests of the chat layer on its own (no continue_final_message
 * trimming, no HF `tojson` overrides); the service renders through the engine's full implementation.
 */
export async function renderWithJinja(model: TemplateModel, input: ChatTemplateInput, options: { addSpecialTokens: boolean }): Promise<RenderedPrompt> {
  const eos = model.tokenizer.eosTokenId;
  const text = new Template(input.template).render({
    ...input.variables,
    messages: input.messages,
    tools: input.tools,
    documents: input.documents,
    add_generation_prompt: input.addGenerationPrompt,
    continue_final_message: input.continueFinalMessage,
    eos_token: eos === undefined ? "" : model.tokenizer.tokenString(eos),
  });
  return { text, tokenIds: model.tokenizer.encode(text, options) };
}

/** A ChatML template in the style of Qwen's: tools in the system turn, <think> reasoning, tool calls and results. */
export const CHATML_TEMPLATE = [
  String.raw`{%- if tools %}{{- '<|im_start|>system\n# Tools\n<tools>' }}{%- for tool in tools %}{{- '\n' + tool.function.name }}{%- endfor %}{{- '\n</tools><|im_end|>\n' }}{%- endif %}`,
  String.raw`{%- for message in messages %}{{- '<|im_start|>' + message.role + '\n' }}`,
  String.raw`{%- if message.reasoning_content %}{{- '<think>' + message.reasoning_content + '</think>' }}{%- endif %}{{- message.content }}`,
  String.raw`{%- for call in message.tool_calls or [] %}{{- '<tool_call>' + call.function.name + '</tool_call>' }}{%- endfor %}{{- '<|im_end|>\n' }}{%- endfor %}`,
  String.raw`{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- if enable_thinking is defined and not enable_thinking %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}{%- endif %}`,
].join("");

/** The model-side inputs of chat rendering (a model description and a real byte-level tokenizer), for unit tests. */
export function byteModel(info: Partial<ModelInfo> = {}): TemplateModel & { tokenizer: ByteTokenizer } {
  const tokenizer = new ByteTokenizer();
  return {
    tokenizer,
    info: {
      id: "test/base",
      architecture: "qwen2",
      maxModelLen: 256,
      vocabSize: tokenizer.vocabSize + 8,
      chatTemplates: { default: CHATML_TEMPLATE, named: {} },
      generationDefaults: {},
      eosTokenIds: [tokenizer.eosTokenId],
      templateSpecialTokens: { eos_token: tokenizer.tokenString(tokenizer.eosTokenId) },
      priorityScheduling: false,
      ...info,
    },
  };
}

/** A completion plan with neutral settings (one choice, no logprobs, no tools), for response and stream tests. */
export function testPlan(tokenizer: Tokenizer, overrides: Partial<CompletionPlan> = {}): CompletionPlan {
  let calls = 0;
  return {
    id: "chatcmpl-test",
    created: 1700000000,
    model: "test/base",
    systemFingerprint: "flywheel-test-00000000",
    n: 1,
    role: "assistant",
    echo: null,
    output: { reasoning: null, includeReasoning: true, toolChoice: { kind: "none" }, parallelToolCalls: true, newToolCallId: () => `chatcmpl-tool-${calls++}` },
    logprobs: false,
    formatter: new LogprobFormatter(tokenizer, { asTokenIds: false, topCount: 0 }),
    returnTokenIds: false,
    promptLogprobs: false,
    hideTokenMetadata: false,
    streamUsage: { include: false, continuous: false },
    ...overrides,
  };
}

/** The tokens of `text` as the engine reports sampled tokens, each with one alternative. */
export function sampledTokens(tokenizer: Tokenizer, text: string, logprob = -0.25): SampledToken[] {
  return tokenizer.encode(text).map((tokenId) => ({
    tokenId,
    logprob,
    top: [
      { tokenId, logprob },
      { tokenId: 0, logprob: logprob - 1 },
    ],
  }));
}

/** Engine events as an async iterable, the shape `InferenceEngine.generate` returns. */
export async function* eventStream(events: GenerateEvent[]): AsyncIterable<GenerateEvent> {
  for (const event of events) yield event;
}
