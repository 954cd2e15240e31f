/**
 * Per-request sampling parameters with every default already resolved (request → the model's
 * generation_config.json → neutral), in vLLM's semantics (`docs/api/chat.md#request`,
 * `docs/api/chat.md#sampling-order`, `docs/api/chat.md#stopping`, `docs/api/chat.md#n-choices`,
 * `docs/api/chat.md#logprobs`, `docs/api/chat.md#repetition-detection`). The chat layer builds these; the
 * engine only reads them.
 */
export interface SamplingParams {
  /** Number of sequences (choices); the beam width under beam search. */
  n: number;
  /** ≥ 0; below 1e-5 means greedy (top-k/p and min-p are then ignored). */
  temperature: number;
  /** In (0, 1]. */
  topP: number;
  /** 0 or -1 disables. */
  topK: number;
  /** In [0, 1]; 0 disables. */
  minP: number;
  /** > 0; 1 disables. Applies to prompt and generated tokens. */
  repetitionPenalty: number;
  /** In [-2, 2]; generated tokens only. */
  frequencyPenalty: number;
  /** In [-2, 2]; generated tokens only. */
  presencePenalty: number;
  /** token id → bias, already clamped to [-100, 100]. */
  logitBias: Map<number, number> | null;
  allowedTokenIds: number[] | null;
  badWords: string[];
  minTokens: number;
  /** Effective output budget, ≥ 1. */
  maxTokens: number;
  ignoreEos: boolean;
  stop: string[];
  /** The request's stop ids; the engine adds the model's EOS ids from generation_config.json. */
  stopTokenIds: number[];
  includeStopStrInOutput: boolean;
  skipSpecialTokens: boolean;
  spacesBetweenSpecialTokens: boolean;
  /** Per-request RNG seed (choice i uses seed + i); null shares the engine's global RNG. */
  seed: number | null;
  /** null → no logprobs; 0 → the sampled token's only; k > 0 → plus the top k; -1 → the whole vocabulary. */
  logprobs: number | null;
  /** null → none; otherwise as `logprobs`, for prompt positions. */
  promptLogprobs: number | null;
  useBeamSearch: boolean;
  lengthPenalty: number;
  /** Keep only the last k prompt tokens; -1 → as many as fit. */
  truncatePromptTokens: number | null;
  repetitionDetection: RepetitionDetection | null;
}

export interface RepetitionDetection {
  maxPatternSize: number;
  minPatternSize: number;
  minCount: number;
}

/** vLLM's neutral defaults (temperature 1, no filters, no logprobs), with overrides. */
export function defaultSamplingParams(overrides: Partial<SamplingParams> = {}): SamplingParams {
  return {
    n: 1,
    temperature: 1,
    topP: 1,
    topK: 0,
    minP: 0,
    repetitionPenalty: 1,
    frequencyPenalty: 0,
    presencePenalty: 0,
    logitBias: null,
    allowedTokenIds: null,
    badWords: [],
    minTokens: 0,
    maxTokens: 16,
    ignoreEos: false,
    stop: [],
    stopTokenIds: [],
    includeStopStrInOutput: false,
    skipSpecialTokens: true,
    spacesBetweenSpecialTokens: true,
    seed: null,
    logprobs: null,
    promptLogprobs: null,
    useBeamSearch: false,
    lengthPenalty: 1,
    truncatePromptTokens: null,
    repetitionDetection: null,
    ...overrides,
  };
}
