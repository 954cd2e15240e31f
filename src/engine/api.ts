import type { ChatTemplates } from "./checkpoint/tokenizer-config.js";
import type { SamplingParams } from "./sampling/params.js";
import type { StructuredConstraint } from "./structured/types.js";
import type { Tokenizer } from "./tokenizer/types.js";

/**
 * The engine's public contract: what the chat endpoint, the trainer and the evaluators call. The
 * model math behind it runs in worker threads; these calls only exchange token ids and results.
 */

/** A LoRA adapter in PEFT layout (adapter_config.json + adapter_model.safetensors). */
export interface AdapterRef {
  /** Identity for caching and batching (e.g. the checkpoint id): equal ids mean equal weights. */
  id: string;
  dir: string;
}

export interface GenerateRequest {
  requestId: string;
  promptTokenIds: number[];
  params: SamplingParams;
  adapter?: AdapterRef;
  /** Salts the prefix cache: requests with different salts never share cached KV. */
  cacheSalt?: string;
  /** Lower is served first; only honoured by an engine started with priority scheduling. */
  priority?: number;
  constraint?: StructuredConstraint;
  /**
   * Apply `constraint` only after this token has been generated (a reasoning model thinks freely,
   * then the grammar starts after `</think>`); absent → from the first generated token.
   */
  constraintStartsAfterTokenId?: number;
  /** Aborting cancels the generation; the stream then ends with finish reason `abort`. */
  signal?: AbortSignal;
}

export interface TokenLogprob {
  tokenId: number;
  /** Raw model log-probability (before any sampling transform), clamped to ≥ -9999. */
  logprob: number;
}

export interface SampledToken extends TokenLogprob {
  /**
   * Raw model log-probability, clamped to ≥ -9999 — or NaN when the request asked for no logprobs
   * (`params.logprobs === null`): computing it costs a pass over the whole vocabulary per token.
   */
  logprob: number;
  /** The top alternatives sorted by descending logprob, ties by lower id (present when logprobs > 0 or -1 were requested). */
  top?: TokenLogprob[];
}

/** Prompt logprobs at one position: the actual token and the top-N, each with its rank (1 = best). */
export interface PromptPositionLogprobs {
  actual: TokenLogprob & { rank: number };
  top: (TokenLogprob & { rank: number })[];
}

export type GenerateEvent =
  /** First event: the prompt as run (after truncation) and how much of it came from the prefix cache. */
  | { type: "started"; promptTokenIds: number[]; cachedTokens: number; promptLogprobs: (PromptPositionLogprobs | null)[] | null }
  /** New tokens of choice `index`, with the visible text they add (stop strings cut, partial ones held back). */
  | { type: "output"; index: number; tokens: SampledToken[]; text: string }
  | { type: "finished"; index: number; finishReason: FinishReason; stopReason: number | string | null };

export type FinishReason = "stop" | "length" | "abort" | "repetition";

export interface ModelInfo {
  /** The served id (e.g. `flywheel/tiny-chat`). */
  id: string;
  architecture: string;
  maxModelLen: number;
  /** The model's own vocabulary size (embedding rows), ≥ tokenizer.vocabSize. */
  vocabSize: number;
  /** The default chat template and any named ones (`tool_use`, …) from tokenizer_config.json / chat_template.jinja. */
  chatTemplates: ChatTemplates;
  /** Resolved defaults from generation_config.json (temperature, top_p, top_k, min_p, repetition_penalty, max_tokens…). */
  generationDefaults: Record<string, number>;
  /** EOS ids: the tokenizer's plus generation_config.json's extra ones. */
  eosTokenIds: number[];
  /** The special-token variables a chat template sees (`bos_token`, `eos_token`, `pad_token`, …). */
  templateSpecialTokens: Record<string, unknown>;
  /** Requests are admitted by `priority` (lower first) instead of arrival order. */
  priorityScheduling: boolean;
}

export interface InferenceEngine {
  readonly info: ModelInfo;
  readonly tokenizer: Tokenizer;
  /** Checks that a constraint compiles for this tokenizer; throws with the reason if not. */
  checkConstraint(constraint: StructuredConstraint): Promise<void>;
  generate(request: GenerateRequest): AsyncIterable<GenerateEvent>;
  close(): Promise<void>;
}
