import type { ModelInfo } from "../../../engine/api.js";
import type { RepetitionDetection, SamplingParams } from "../../../engine/sampling/params.js";
import { pythonRepr } from "../../../python-format.js";
import { chatRuleError } from "../common/chat-errors.js";
import type { ChatCompletionRequest } from "../completions/protocol.js";

/**
 * The request's sampling fields → the engine's `SamplingParams`, with defaults resolved request → the model's
 * generation_config.json → neutral (`docs/api/chat.md#defaults`) and vLLM's `SamplingParams` checks in vLLM's
 * order (docs/api/chat.md#openai-fields, docs/api/chat.md#sampling-fields, messages verbatim).
 */

/** Most logprobs a request may ask for per position (vLLM's default `max_logprobs`). */
export const MAX_LOGPROBS = 20;
/** Most choices per request (OpenAI's cap; vLLM's own default limit is far above what a CPU engine can hold). */
export const MAX_N = 128;
/** Below this temperature sampling is greedy. */
const GREEDY_EPSILON = 1e-5;
/** vLLM raises positive temperatures below this, which overflow in the softmax. */
const MIN_TEMPERATURE = 0.01;

export interface SamplingContext {
  info: Pick<ModelInfo, "vocabSize" | "generationDefaults">;
  /** Ids the tokenizer defines (allowed_token_ids are checked against it, logit_bias against the model's vocabulary). */
  tokenizerVocabSize: number;
  /** The effective max_tokens from `resolvePromptBudget`. */
  maxTokens: number;
  /** `logprobs` after the trained-model default. */
  logprobs: boolean;
}

type Neutral = "temperature" | "top_p" | "top_k" | "min_p" | "repetition_penalty" | "presence_penalty" | "frequency_penalty";

const NEUTRAL: Record<Neutral, number> = { temperature: 1, top_p: 1, top_k: 0, min_p: 0, repetition_penalty: 1, presence_penalty: 0, frequency_penalty: 0 };

function resolved(req: ChatCompletionRequest, defaults: Record<string, number>, name: Neutral): number {
  const value = req[name];
  if (value !== null && value !== undefined) return value;
  return typeof defaults[name] === "number" ? defaults[name] : NEUTRAL[name];
}

export function buildSamplingParams(req: ChatCompletionRequest, ctx: SamplingContext): SamplingParams {
  const defaults = ctx.info.generationDefaults;
  const logitBias = convertLogitBias(req.logit_bias);
  const n = req.n ?? 1;
  let temperature = resolved(req, defaults, "temperature");
  let topP = resolved(req, defaults, "top_p");
  let topK = resolved(req, defaults, "top_k");
  let minP = resolved(req, defaults, "min_p");
  const repetitionPenalty = resolved(req, defaults, "repetition_penalty");
  const presencePenalty = resolved(req, defaults, "presence_penalty");
  const frequencyPenalty = resolved(req, defaults, "frequency_penalty");
  const stop = typeof req.stop === "string" ? [req.stop] : (req.stop ?? []);

  if (n < 1) throw chatRuleError(`n must be at least 1, got ${n}.`);
  if (n > MAX_N) throw chatRuleError(`n must be at most ${MAX_N}, got ${n}.`);
  if (!(presencePenalty >= -2 && presencePenalty <= 2)) throw chatRuleError(`presence_penalty must be in [-2, 2], got ${pyFloat(presencePenalty)}.`);
  if (!(frequencyPenalty >= -2 && frequencyPenalty <= 2)) throw chatRuleError(`frequency_penalty must be in [-2, 2], got ${pyFloat(frequencyPenalty)}.`);
  if (!Number.isFinite(repetitionPenalty)) throw chatRuleError(`repetition_penalty must be a finite number, got ${pyFloat(repetitionPenalty)}.`);
  if (repetitionPenalty <= 0) throw chatRuleError(`repetition_penalty must be greater than zero, got ${pyFloat(repetitionPenalty)}.`);
  if (!Number.isFinite(temperature)) {
    throw chatRuleError(`temperature must be a finite number, got ${pyFloat(temperature)}.`, { param: "temperature", value: temperature, float: true });
  }
  if (temperature < 0) throw chatRuleError(`temperature must be non-negative, got ${pyFloat(temperature)}.`, { param: "temperature", value: temperature, float: true });
  if (temperature > 2) throw chatRuleError(`temperature must be in [0, 2], got ${pyFloat(temperature)}.`, { param: "temperature", value: temperature, float: true });
  if (!(topP > 0 && topP <= 1)) throw chatRuleError(`top_p must be in (0, 1], got ${pyFloat(topP)}.`, { param: "top_p", value: topP, float: true });
  if (topK < -1) throw chatRuleError(`top_k must be 0 (disable), or at least 1, got ${topK}.`);
  if (!(minP >= 0 && minP <= 1)) throw chatRuleError(`min_p must be in [0, 1], got ${pyFloat(minP)}.`);
  if (ctx.maxTokens < 1) throw chatRuleError(`max_tokens must be at least 1, got ${ctx.maxTokens}.`, { param: "max_tokens", value: ctx.maxTokens });
  if (req.min_tokens < 0) throw chatRuleError(`min_tokens must be greater than or equal to 0, got ${req.min_tokens}.`);
  if (req.min_tokens > ctx.maxTokens) throw chatRuleError(`min_tokens must be less than or equal to max_tokens=${ctx.maxTokens}, got ${req.min_tokens}.`);
  if (stop.some((entry) => entry === "")) throw chatRuleError("stop cannot contain an empty string.");
  if (req.bad_words.some((word) => word === "")) throw chatRuleError(`bad_words cannot contain an empty string. Got bad_words=${pythonRepr(req.bad_words)}`);

  if (0 < temperature && temperature < MIN_TEMPERATURE) temperature = MIN_TEMPERATURE;
  if (temperature < GREEDY_EPSILON) {
    topP = 1;
    topK = 0;
    minP = 0;
    if (n > 1 && !req.use_beam_search) throw chatRuleError(`n must be 1 when using greedy sampling, got ${n}.`);
  }

  const logprobs = ctx.logprobs ? (req.top_logprobs ?? 0) : null;
  checkLogprobCount("sample", logprobs, ctx.info.vocabSize);
  const promptLogprobs = req.prompt_logprobs ?? (req.echo ? (req.top_logprobs ?? 0) : null);
  checkLogprobCount("prompt", promptLogprobs, ctx.info.vocabSize);
  checkLogitBiasVocabulary(logitBias, ctx.info.vocabSize);
  const allowedTokenIds = checkAllowedTokenIds(req.allowed_token_ids, ctx.tokenizerVocabSize);

  return {
    n,
    temperature,
    topP,
    topK,
    minP,
    repetitionPenalty,
    frequencyPenalty,
    presencePenalty,
    logitBias,
    allowedTokenIds,
    badWords: req.bad_words,
    minTokens: req.min_tokens,
    maxTokens: ctx.maxTokens,
    ignoreEos: req.ignore_eos,
    stop,
    stopTokenIds: [...new Set(req.stop_token_ids ?? [])],
    includeStopStrInOutput: req.include_stop_str_in_output,
    skipSpecialTokens: req.skip_special_tokens,
    spacesBetweenSpecialTokens: req.spaces_between_special_tokens,
    seed: req.seed === undefined || req.seed === null || req.seed === -1 ? null : req.seed,
    logprobs,
    promptLogprobs,
    useBeamSearch: req.use_beam_search,
    lengthPenalty: req.length_penalty,
    truncatePromptTokens: req.truncate_prompt_tokens ?? null,
    repetitionDetection: repetitionDetection(req),
  };
}

const pyFloat = (value: number) => pythonRepr(value, { float: true });

const INTEGER_KEY = /^\s*[+-]?\d+\s*$/;

/** Keys must be integer token ids (vLLM's text lists the others); values clamp to [-100, 100] as Python's min/max do. */
function convertLogitBias(bias: Record<string, number> | null | undefined): Map<number, number> | null {
  if (!bias) return null;
  const invalid = Object.keys(bias).filter((key) => !INTEGER_KEY.test(key));
  if (invalid.length > 0) {
    throw chatRuleError(`logit_bias contains key(s) that cannot be converted to integer token IDs: ${pythonRepr(invalid)}`, { param: "logit_bias", value: invalid });
  }
  const converted = new Map<number, number>();
  for (const [key, value] of Object.entries(bias)) {
    const lower = value > -100 ? value : -100;
    converted.set(Number(key), lower < 100 ? lower : 100);
  }
  return converted;
}

function checkLogitBiasVocabulary(bias: Map<number, number> | null, vocabSize: number): void {
  if (!bias) return;
  const invalid = [...bias.keys()].filter((id) => id < 0 || id >= vocabSize);
  if (invalid.length > 0) {
    throw chatRuleError(`token_id(s) ${pythonRepr(invalid)} in logit_bias contain out-of-vocab token ids. Vocabulary size: ${vocabSize}`, {
      param: "logit_bias",
      value: invalid,
    });
  }
}

function checkAllowedTokenIds(ids: number[] | null | undefined, vocabSize: number): number[] | null {
  if (ids === null || ids === undefined) return null;
  if (ids.length === 0) throw chatRuleError("allowed_token_ids is not None and empty!", { param: "allowed_token_ids", value: ids });
  const invalid = ids.filter((id) => id < 0 || id >= vocabSize);
  if (invalid.length > 0) throw chatRuleError("allowed_token_ids contains out-of-vocab token id!", { param: "allowed_token_ids", value: invalid });
  return [...new Set(ids)];
}

function checkLogprobCount(kind: "sample" | "prompt", requested: number | null, vocabSize: number): void {
  if (requested === null || requested === 0) return;
  const count = requested === -1 ? vocabSize : requested;
  if (count > MAX_LOGPROBS) {
    const param = kind === "sample" ? "logprobs" : "prompt_logprobs";
    throw chatRuleError(`Requested ${kind} logprobs of ${count}, which is greater than max allowed: ${MAX_LOGPROBS}`, { param, value: count });
  }
}

function repetitionDetection(req: ChatCompletionRequest): RepetitionDetection | null {
  const detection = req.repetition_detection;
  if (!detection || detection.max_pattern_size === 0) return null;
  return { maxPatternSize: detection.max_pattern_size, minPatternSize: detection.min_pattern_size, minCount: detection.min_count };
}
