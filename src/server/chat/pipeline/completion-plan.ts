import type { OutputOptions } from "../parsers/choice-output.js";
import type { LogprobFormatter } from "./logprobs.js";

/** Everything decided before generation that shapes the response, streamed or whole. */
export interface CompletionPlan {
  /** `chatcmpl-…`, shared by every chunk. */
  id: string;
  /** Unix seconds, shared by every chunk. */
  created: number;
  /** The `model` field: the base id, or the trained-model name as requested. */
  model: string;
  systemFingerprint: string;
  n: number;
  /** Role of the generated message. */
  role: string;
  /** Text of the last input message to prepend (`echo`), or null. */
  echo: string | null;
  output: OutputOptions;
  /** `choices[].logprobs` are on. */
  logprobs: boolean;
  /** Writes logprob entries and prompt logprobs with the model's tokenizer. */
  formatter: LogprobFormatter;
  returnTokenIds: boolean;
  /** `prompt_logprobs` were requested (non-streaming only). */
  promptLogprobs: boolean;
  /**
   * A reasoning model with include_reasoning=false: logprobs and token ids are withheld too, so
   * the hidden reasoning cannot be read back from them.
   */
  hideTokenMetadata: boolean;
  /** Streaming only: a final usage chunk, and running usage on every chunk. */
  streamUsage: { include: boolean; continuous: boolean };
}

export interface Usage {
  prompt_tokens: number;
  total_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

/** The usage object; `cachedTokens` (prompt tokens served from the prefix cache) only in the final usage. */
export function usage(promptTokens: number, completionTokens: number, cachedTokens?: number): Usage {
  const out: Usage = { prompt_tokens: promptTokens, total_tokens: promptTokens + completionTokens, completion_tokens: completionTokens };
  if (cachedTokens !== undefined) out.prompt_tokens_details = { cached_tokens: cachedTokens };
  return out;
}
