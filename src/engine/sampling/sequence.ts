import type { SamplingParams } from "./params.js";
import { choiceSeed, Rng } from "./rng.js";
import { checkStop, type Finish, type StopRules } from "./stop.js";
import { TokenHistory } from "./token-history.js";

export interface SequenceOptions {
  params: SamplingParams;
  /** The prompt as run (after truncation). */
  promptTokenIds: readonly number[];
  /** The tokenizer's EOS id: stops with stop_reason null (unless ignore_eos). */
  eosTokenId: number | undefined;
  /** generation_config.json's other EOS ids: stop with stop_reason = the id (unless ignore_eos). */
  extraEosTokenIds?: readonly number[];
  /** bad_words as token sequences (`tokenizeBadWords`), computed once per request. */
  badWordsTokenIds?: readonly (readonly number[])[];
  /** The choice index i: a seeded request's choice i uses seed + i. */
  choiceIndex?: number;
  /** The model's context length; prompt + output never exceed it. */
  maxModelLen?: number;
}

/**
 * Everything the sampler and the stop check keep for one sequence (one choice of a request):
 * its tokens, penalty bookkeeping, its own RNG when the request is seeded, and how it finished.
 * The engine appends every token it samples and stops calling the sampler once `finish` is set.
 */
export class SequenceState {
  readonly params: SamplingParams;
  readonly history: TokenHistory;
  /** The sequence's own RNG (seeded requests); null draws from the sampler's shared one. */
  readonly rng: Rng | null;
  readonly stopRules: StopRules;
  /** Tokens min_tokens forbids while too few were generated: every EOS id and stop token id, even under ignore_eos. */
  readonly minTokensBannedIds: readonly number[];
  /** allowed_token_ids sorted and unique, or null. */
  readonly allowedTokenIds: Int32Array | null;
  readonly badWordsTokenIds: readonly (readonly number[])[];
  readonly penaltiesActive: boolean;
  private finished: Finish | null = null;

  constructor(options: SequenceOptions) {
    const { params } = options;
    this.params = params;
    this.penaltiesActive = params.repetitionPenalty !== 1 || params.frequencyPenalty !== 0 || params.presencePenalty !== 0;
    this.history = new TokenHistory(options.promptTokenIds, this.penaltiesActive);
    this.rng = params.seed === null ? null : Rng.fromSeed(choiceSeed(params.seed, options.choiceIndex ?? 0));

    const extraEos = (options.extraEosTokenIds ?? []).filter((id) => id !== options.eosTokenId);
    const stopTokenIds = new Set(params.stopTokenIds);
    if (!params.ignoreEos) for (const id of extraEos) stopTokenIds.add(id);
    this.stopRules = {
      minTokens: params.minTokens,
      maxTokens: params.maxTokens,
      eosTokenId: params.ignoreEos ? undefined : options.eosTokenId,
      stopTokenIds,
      maxModelLen: options.maxModelLen ?? Number.POSITIVE_INFINITY,
      repetitionDetection: params.repetitionDetection,
    };
    const banned = new Set<number>([...params.stopTokenIds, ...extraEos]);
    if (options.eosTokenId !== undefined) banned.add(options.eosTokenId);
    this.minTokensBannedIds = [...banned];
    this.allowedTokenIds = params.allowedTokenIds ? Int32Array.from(new Set(params.allowedTokenIds)).sort() : null;
    if (params.badWords.length > 0 && !options.badWordsTokenIds) {
      throw new Error("bad_words need their token ids: pass badWordsTokenIds (tokenizeBadWords)");
    }
    this.badWordsTokenIds = options.badWordsTokenIds ?? [];
  }

  get outputTokenIds(): readonly number[] {
    return this.history.outputTokenIds;
  }

  /** Set once the sequence has ended. */
  get finish(): Finish | null {
    return this.finished;
  }

  /** Records a generated token and runs the token-level stop check; returns the finish if it ended. */
  append(tokenId: number): Finish | null {
    if (this.finished) throw new Error("cannot append a token to a finished sequence");
    this.history.append(tokenId);
    this.finished = checkStop(this.stopRules, this.history.outputTokenIds, this.history.promptTokenIds.length);
    return this.finished;
  }

  /** Ends the sequence for a reason found outside the token check (a stop string, an abort). */
  end(finish: Finish): void {
    this.finished = finish;
  }
}
