import type { GenerateRequest, InferenceEngine } from "../../../engine/api.js";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import { chatRuleError } from "../common/chat-errors.js";
import { buildConstraint } from "../pipeline/constraints.js";
import { systemFingerprint } from "../pipeline/ids.js";
import { LogprobFormatter } from "../pipeline/logprobs.js";
import { checkConstraint, isTrainedModelName, type PrepareContext, planGeneration, resolveTarget, tokenDefaults } from "../pipeline/prepare.js";
import { textSize } from "../pipeline/request-limits.js";
import { checkRequestRules } from "../pipeline/request-rules.js";
import type { ChatCompletionRequest } from "../completions/protocol.js";
import { MAX_N } from "../pipeline/sampling.js";
import type { CompletionRequest } from "./protocol.js";
import { randomUUID } from "node:crypto";

/**
 * A legacy completion request → one engine request per prompt and the plan of the response. The
 * request is carried onto the chat core (`planGeneration`: prompt budget, sampling parameters,
 * structured outputs, adapters) as a chat request without messages, so every sampling rule and
 * message text is chat's; only the prompt handling (no template: text is tokenized as is, token
 * ids are taken as they are) and the response shape are this surface's.
 */

export interface LegacyPrompt {
  tokenIds: number[];
  /** The prompt's text, for `echo`: as sent, or decoded from the token ids. */
  text: string;
}

export interface LegacyPlan {
  id: string;
  created: number;
  model: string;
  systemFingerprint: string;
  n: number;
  echo: boolean;
  prompts: LegacyPrompt[];
  /** The requested count of alternatives, or null when no logprobs are returned. */
  logprobs: number | null;
  formatter: LogprobFormatter;
  returnTokenIds: boolean;
  promptLogprobs: boolean;
  streamUsage: { include: boolean; continuous: boolean };
}

export interface PreparedLegacyCompletion {
  engine: InferenceEngine;
  generates: Omit<GenerateRequest, "signal">[];
  plan: LegacyPlan;
}

/** The request as the chat core reads it: no messages, `logprobs` as chat's flag plus `top_logprobs`. */
export function chatCoreRequest(req: CompletionRequest, trained: boolean): ChatCompletionRequest {
  return {
    ...req,
    messages: [],
    logprobs: req.logprobs !== null && req.logprobs !== undefined ? true : !!trained,
    top_logprobs: req.logprobs ?? null,
    max_tokens: req.max_tokens,
    max_completion_tokens: null,
    include_reasoning: true,
    add_generation_prompt: true,
    continue_final_message: false,
  };
}

export async function prepareLegacyCompletion(req: CompletionRequest, ctx: PrepareContext): Promise<PreparedLegacyCompletion> {
  checkLegacyRules(req, ctx);
  const trained = isTrainedModelName(req.model, ctx);
  const core = chatCoreRequest(req, trained);
  checkRequestRules(core, { logprobs: core.logprobs ?? false });
  const target = await resolveTarget(req.model, ctx);
  const { tokenizer } = target;
  const prompts = promptsOf(req, tokenizer);
  const n = req.n ?? 1;
  if (prompts.length * n > MAX_N) throw chatRuleError(`The request asks for ${prompts.length * n} choices (prompts × n), more than ${MAX_N}.`, { param: "prompt" });

  const constraint = buildConstraint(core, { kind: "none" });
  if (constraint) await checkConstraint(target.engine, constraint);
  const id = `cmpl-${ctx.headerRequestId || req.request_id || randomUUID().replaceAll("-", "")}`;
  const logprobs = core.logprobs ? (req.logprobs ?? 0) : null;
  const asTokenIds = tokenDefaults(core, target.model.trained).asTokenIds;
  const generates = prompts.map((prompt) => {
    // Not a stream to the chat core: an echo's logprobs need the prompt's, also when streamed.
    const { generate } = planGeneration({ ...core, stream: false }, target, { id, promptTokenIds: prompt.tokenIds, constraint, logprobs: logprobs !== null });
    generate.params.promptLogprobs = req.prompt_logprobs ?? (req.echo && logprobs !== null ? logprobs : null);
    return generate;
  });
  const plan: LegacyPlan = {
    id,
    created: Math.floor(Date.now() / 1000),
    model: target.model.responseModel,
    systemFingerprint: systemFingerprint(target.info),
    n,
    echo: req.echo,
    prompts: prompts.map((prompt, index) => ({ ...prompt, tokenIds: generates[index]!.promptTokenIds })),
    logprobs,
    formatter: new LogprobFormatter(tokenizer, { asTokenIds, topCount: logprobs ?? 0 }),
    returnTokenIds: req.return_token_ids ?? false,
    promptLogprobs: req.prompt_logprobs !== null && req.prompt_logprobs !== undefined,
    streamUsage: { include: Boolean(req.stream_options?.include_usage), continuous: Boolean(req.stream_options?.include_usage && req.stream_options.continuous_usage_stats) },
  };
  return { engine: target.engine, generates, plan };
}

/** What vLLM refuses before the model: `suffix`, prompt embeddings, negative logprobs; and the server's prompt size limit. */
function checkLegacyRules(req: CompletionRequest, ctx: PrepareContext): void {
  if (req.suffix !== null && req.suffix !== undefined) throw chatRuleError("suffix is not currently supported", { param: "suffix" });
  if (req.prompt_embeds !== undefined && req.prompt_embeds !== null) {
    throw chatRuleError("prompt_embeds are not supported: this server takes prompts as text or token ids.", { param: "prompt_embeds" });
  }
  if (req.logprobs !== null && req.logprobs !== undefined && req.logprobs < 0 && req.logprobs !== -1) {
    throw chatRuleError("`logprobs` must be a positive value or -1.", { param: "logprobs", value: req.logprobs });
  }
  if (req.stream && req.prompt_logprobs !== null && req.prompt_logprobs !== undefined && req.prompt_logprobs !== 0) {
    throw chatRuleError("`prompt_logprobs` are not available when `stream=True`.", { param: "prompt_logprobs" });
  }
  const chars = textSize(req.prompt, ctx.limits.maxPromptChars);
  if (chars > ctx.limits.maxPromptChars) {
    throw chatRuleError(`The prompt holds more than ${ctx.limits.maxPromptChars} characters, this server's limit for a prompt (FLYWHEEL_MAX_PROMPT_CHARS).`, { param: "prompt" });
  }
}

/** Each prompt as token ids and text: strings are tokenized as they are (no chat template), ids are checked against the vocabulary. */
export function promptsOf(req: Pick<CompletionRequest, "prompt" | "add_special_tokens" | "skip_special_tokens">, tokenizer: Tokenizer): LegacyPrompt[] {
  const { prompt } = req;
  const list: (string | number[])[] = typeof prompt === "string" ? [prompt] : typeof prompt[0] === "number" ? [prompt as number[]] : (prompt as (string | number[])[]);
  return list.map((item) => {
    if (typeof item === "string") {
      const tokenIds = tokenizer.encode(item, { addSpecialTokens: req.add_special_tokens });
      if (tokenIds.length === 0) throw chatRuleError("The prompt is empty: it has no tokens.", { param: "prompt" });
      return { tokenIds, text: item };
    }
    const outside = item.filter((id) => !Number.isInteger(id) || id < 0 || id >= tokenizer.vocabSize);
    if (outside.length > 0) throw chatRuleError(`Token id ${outside[0]} is out of vocabulary (vocabulary size ${tokenizer.vocabSize}).`, { param: "prompt" });
    return { tokenIds: item, text: tokenizer.decode(item, { skipSpecialTokens: req.skip_special_tokens }) };
  });
}
