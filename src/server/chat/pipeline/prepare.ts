import { randomBytes } from "node:crypto";
import type { ChatLimits } from "../../../config.js";
import type { GenerateRequest, InferenceEngine, ModelInfo } from "../../../engine/api.js";
import type { SamplingParams } from "../../../engine/sampling/params.js";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import { ApiError } from "../../errors.js";
import { chatRuleError } from "../common/chat-errors.js";
import type { CompletionPlan } from "./completion-plan.js";
import { buildConstraint } from "./constraints.js";
import { type ChatEngines, chatFeatures } from "./engines.js";
import { completionId, systemFingerprint, toolCallId } from "./ids.js";
import { LogprobFormatter } from "./logprobs.js";
import { contentText } from "./messages.js";
import { classifyModelName, type ModelResolverDeps, type ResolvedModel, resolveModel } from "../models/model-resolver.js";
import { resolvePromptBudget } from "./prompt-budget.js";
import { reasoningStartOf } from "../parsers/reasoning-parser.js";
import { checkRequestRules } from "./request-rules.js";
import type { RuntimeAdapters } from "../lora/runtime-adapters.js";
import { checkRequestLimits } from "./request-limits.js";
import type { ChatCompletionRequest } from "../completions/protocol.js";
import { buildSamplingParams } from "./sampling.js";
import { type ChatTemplateRenderer, renderPrompt, responseRole } from "./template.js";
import { checkToolChoiceSupported, effectiveToolChoice } from "./tool-choice.js";

/**
 * Turns a schema-valid request into the engine request and the response plan, running every
 * remaining check on the way — so that every failure is a real HTTP error, also when streaming
 * (`docs/api/chat.md#error-timing`). The order is vLLM's: request rules (400), the model (404), the
 * template, prompt length, sampling parameters, then the engine-side checks (vocabulary,
 * logprob counts, grammar compilation).
 */

export interface PrepareContext {
  entity: string;
  /** The `X-Request-Id` header, which names the completion when present. */
  headerRequestId: string | undefined;
  engines: ChatEngines | undefined;
  resolver: ModelResolverDeps;
  /** Adapters loaded through /v1/load_lora_adapter, served under their names. */
  runtimeAdapters?: RuntimeAdapters;
  /** The server's limits on a request (`config.chat`). */
  limits: ChatLimits;
}

export interface PreparedCompletion {
  engine: InferenceEngine;
  generate: Omit<GenerateRequest, "signal">;
  plan: CompletionPlan;
  stream: boolean;
}

/**
 * Trained-model names default to token-id logprobs: ART's rollouts train on them
 * (docs/api/training.md#trained-model-logprobs).
 */
export function tokenDefaults(req: ChatCompletionRequest, trained: boolean): { logprobs: boolean; asTokenIds: boolean } {
  return { logprobs: req.logprobs ?? trained, asTokenIds: req.return_tokens_as_token_ids ?? trained };
}

export async function prepareCompletion(req: ChatCompletionRequest, ctx: PrepareContext): Promise<PreparedCompletion> {
  checkRequestLimits(req, ctx.limits);
  checkRequestRules(req, { logprobs: tokenDefaults(req, isTrainedModelName(req.model, ctx)).logprobs });
  const target = await resolveTarget(req.model, ctx);
  const engines = ctx.engines!;
  const planned = await planCompletion(req, target, { render: engines.renderChatTemplate, headerRequestId: ctx.headerRequestId });
  if (planned.generate.constraint) await checkConstraint(target.engine, planned.generate.constraint);
  return { engine: target.engine, ...planned };
}

/** Whether a `model` names a trained model (whose token defaults differ), from its syntax alone. */
export function isTrainedModelName(name: string | null | undefined, ctx: PrepareContext): boolean {
  if (ctx.runtimeAdapters?.get(ctx.entity, name)) return false;
  const parsed = classifyModelName(name, ctx.resolver.catalog).parsed;
  return parsed !== undefined && parsed.kind !== "base";
}

/** The model a request names, resolved for the caller's entity, with the engine that serves it (404, 503 otherwise). */
export async function resolveTarget(name: string | null | undefined, ctx: PrepareContext): Promise<CompletionTarget & { engine: InferenceEngine }> {
  const runtime = ctx.runtimeAdapters?.get(ctx.entity, name);
  // An adapter loaded by name keeps vLLM's defaults (no logprobs unless asked), like a base model.
  const model: ResolvedModel = runtime
    ? { baseModelId: runtime.baseModelId, responseModel: runtime.name, trained: false, adapter: { id: runtime.id, dir: runtime.dir } }
    : await resolveModel(classifyModelName(name, ctx.resolver.catalog), ctx.entity, ctx.resolver);
  const engines = ctx.engines;
  if (!engines) throw new ApiError(503, "No inference engine is available on this server.", { type: "ServiceUnavailableError" });
  const engine = await loadEngine(engines, model.baseModelId);
  return { model, info: engine.info, tokenizer: engine.tokenizer, engine };
}

/** The model a request runs on: what it resolved to, and the engine's description and tokenizer. */
export interface CompletionTarget {
  model: ResolvedModel;
  info: ModelInfo;
  tokenizer: Tokenizer;
}

/**
 * Everything between the resolved model and the engine call: priority, tools, constraint,
 * template, prompt budget, sampling parameters, and the response plan. Free of I/O but for the
 * template renderer (which may render on another thread); the grammar compile check is left to
 * the caller (it needs the engine).
 */
export async function planCompletion(req: ChatCompletionRequest, target: CompletionTarget, options: { render: ChatTemplateRenderer; headerRequestId: string | undefined }): Promise<Omit<PreparedCompletion, "engine">> {
  const { model, tokenizer } = target;
  const { logprobs, asTokenIds } = tokenDefaults(req, model.trained);
  checkPriority(req, target.info);
  const features = chatFeatures(tokenizer);
  const toolChoice = effectiveToolChoice(req);
  checkToolChoiceSupported(toolChoice, { id: model.responseModel, hermesToolCalls: features.hermesToolCalls });
  const constraint = buildConstraint(req, toolChoice);
  const prompt = await renderPrompt(req, target, options.render);
  const id = completionId(options.headerRequestId, req.request_id);
  const generation = planGeneration(req, target, { id, promptTokenIds: prompt.tokenIds, constraint, logprobs });
  const { params } = generation.generate;
  // `<tool_call>` may be a special token: keep special tokens in the text when calls are parsed (vLLM's Hermes parser does).
  if (toolChoice.kind !== "none") params.skipSpecialTokens = false;

  const reasoning = features.reasoning ? reasoningStartOf(prompt.text) : null;
  const role = responseRole(req);
  const last = req.messages[req.messages.length - 1]!;
  const plan: CompletionPlan = {
    id,
    created: Math.floor(Date.now() / 1000),
    model: model.responseModel,
    systemFingerprint: systemFingerprint(target.info),
    n: params.n,
    role,
    echo: req.echo ? (last.role === role ? contentText(last.content) : "") : null,
    output: { reasoning, includeReasoning: req.include_reasoning, toolChoice, parallelToolCalls: req.parallel_tool_calls ?? true, newToolCallId: toolCallId },
    logprobs,
    formatter: new LogprobFormatter(tokenizer, { asTokenIds, topCount: req.top_logprobs ?? 0 }),
    returnTokenIds: req.return_token_ids ?? false,
    promptLogprobs: params.promptLogprobs !== null,
    hideTokenMetadata: features.reasoning && !req.include_reasoning,
    streamUsage: { include: Boolean(req.stream_options?.include_usage), continuous: Boolean(req.stream_options?.include_usage && req.stream_options.continuous_usage_stats) },
  };
  const { generate } = generation;
  if (constraint && reasoning === "reasoning" && req.include_reasoning && features.thinkEndTokenId !== undefined) {
    // A model already thinking when generation starts reasons freely; the grammar starts after `</think>`.
    generate.constraintStartsAfterTokenId = features.thinkEndTokenId;
  }
  return { generate, plan, stream: Boolean(req.stream) };
}

/** What `planGeneration` needs beyond the request: the prompt as tokens, and what the surface decided. */
export interface GenerationInput {
  /** The response id; the engine's request id is derived from it. */
  id: string;
  promptTokenIds: number[];
  constraint: NonNullable<GenerateRequest["constraint"]> | null;
  /** `logprobs` after the trained-model default. */
  logprobs: boolean;
}

/**
 * The protocol-independent part of a plan, shared by every surface that generates (chat, the
 * legacy completions, Responses, Messages): priority, prompt budget, sampling parameters and the
 * engine request for an already tokenized prompt.
 */
export function planGeneration(req: ChatCompletionRequest, target: CompletionTarget, input: GenerationInput): { generate: Omit<GenerateRequest, "signal"> & { params: SamplingParams } } {
  const { model, info, tokenizer } = target;
  checkPriority(req, info);
  const requestedParam = req.max_completion_tokens !== null && req.max_completion_tokens !== undefined ? "max_completion_tokens" : "max_tokens";
  const budget = resolvePromptBudget({
    promptTokenIds: input.promptTokenIds,
    maxModelLen: info.maxModelLen,
    requested: req.max_completion_tokens ?? req.max_tokens ?? null,
    requestedParam,
    truncatePromptTokens: req.truncate_prompt_tokens ?? null,
    generationMaxTokens: generationMaxTokens(info.generationDefaults),
  });
  const params = buildSamplingParams(req, { info, tokenizerVocabSize: tokenizer.vocabSize, maxTokens: budget.maxTokens, logprobs: input.logprobs });
  // Streams never carry prompt logprobs (explicit ones are refused above 0); don't compute them.
  if (req.stream) params.promptLogprobs = null;
  // The engine's id stays unique even when callers reuse an X-Request-Id.
  const requestId = `${input.id}-${randomBytes(4).toString("hex")}`;
  const generate: Omit<GenerateRequest, "signal"> & { params: SamplingParams } = { requestId, promptTokenIds: budget.promptTokenIds, params, priority: req.priority };
  if (model.adapter) generate.adapter = model.adapter;
  if (req.cache_salt) generate.cacheSalt = req.cache_salt;
  if (input.constraint) generate.constraint = input.constraint;
  return { generate };
}

function checkPriority(req: ChatCompletionRequest, info: ModelInfo): void {
  if (req.priority !== 0 && !info.priorityScheduling) {
    throw chatRuleError(`Got priority ${req.priority} but Priority scheduling is not enabled.`, { param: "priority" });
  }
}

async function loadEngine(engines: ChatEngines, baseModelId: string): Promise<InferenceEngine> {
  try {
    return await engines.get(baseModelId);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(500, `The model \`${baseModelId}\` could not be loaded: ${error instanceof Error ? error.message : String(error)}`, { type: "InternalServerError" });
  }
}

/** Grammar compilation failures are the request's fault: 400 with the compiler's message (vLLM's texts). */
export async function checkConstraint(engine: InferenceEngine, constraint: NonNullable<GenerateRequest["constraint"]>): Promise<void> {
  try {
    await engine.checkConstraint(constraint);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw chatRuleError(error instanceof Error ? error.message : String(error));
  }
}

function generationMaxTokens(defaults: Record<string, number>): number | null {
  const value = defaults.max_tokens ?? defaults.max_new_tokens;
  return typeof value === "number" && value > 0 ? value : null;
}
