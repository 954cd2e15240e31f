import type { SampledToken } from "../api.js";
import { clampLogprob, logSumExp } from "./fast-math.js";
import { applyTokenBitmask, type TokenBitmask } from "./logits-processors.js";
import { topKIndices } from "./select.js";
import type { Finish } from "./stop.js";

export interface BeamSearchOptions {
  /** Beam width (the request's n). */
  width: number;
  /** Expansion steps (the effective max_tokens). */
  maxTokens: number;
  lengthPenalty: number;
  /** Prompt length: the length penalty counts the whole sequence. */
  promptLength: number;
  /** Tokens that finish a beam (stop_reason = the id). */
  eosTokenIds: readonly number[];
  ignoreEos: boolean;
  /** Keep the EOS token in a finished beam's tokens. */
  includeStopStrInOutput: boolean;
  /** Top alternatives to record per token (the request's logprobs); null or 0 records none. */
  logprobs: number | null;
}

/** A beam that needs logits for its next token. */
export interface LiveBeam {
  /** Unique within the search. The first beam (the bare prompt) has id 0. */
  readonly id: number;
  /** The beam this one extends by one token (its KV cache is the one to fork); -1 for the first. */
  readonly parentId: number;
  /** Generated tokens so far; the last one is the token to feed the model next. */
  readonly tokenIds: readonly number[];
  readonly cumulativeLogprob: number;
}

export interface BeamResult {
  /** Generated tokens; a final EOS only with include_stop_str_in_output. */
  tokenIds: number[];
  /** One entry per token of `tokenIds`: raw logprob and alternatives. */
  tokens: SampledToken[];
  /** The tokens whose text forms the content (a final EOS never does). */
  textTokenIds: number[];
  cumulativeLogprob: number;
  /** cumulative_logprob / L^length_penalty, L = prompt + output (minus a final EOS). */
  score: number;
  finish: Finish;
}

interface Beam extends LiveBeam {
  readonly tokenIds: number[];
  readonly tokens: SampledToken[];
  readonly finish: Finish | null;
}

/**
 * Beam search bookkeeping with vLLM's rules (`docs/api/chat.md#beam-search`). Each step the caller runs the
 * model once per live beam and passes the logits in `live` order; every beam is expanded with its
 * 2·width most likely next tokens (raw logprobs), candidates that are EOS go to the finished pool
 * (unless ignore_eos), and the best `width` of the rest become the new live beams. Each new beam
 * names its parent, so the caller forks the parent's KV cache and appends the new token. After
 * `maxTokens` steps (or when nothing is live) `results()` ranks finished and live beams together.
 *
 * Penalties, bias, stop strings and the like do not apply to beam search, as in vLLM. Candidates
 * are ranked by raw logprob — the temperature cannot change that order — and vLLM's extra randomly
 * sampled candidate is not added, so beam search here is deterministic.
 */
export class BeamSearch {
  private readonly options: BeamSearchOptions;
  private readonly eos: ReadonlySet<number>;
  private liveBeams: Beam[];
  private readonly finished: Beam[] = [];
  private steps = 0;
  private nextId = 1;

  constructor(options: BeamSearchOptions) {
    if (options.width < 1) throw new RangeError(`beam width must be at least 1, got ${options.width}`);
    this.options = options;
    this.eos = new Set(options.eosTokenIds);
    this.liveBeams = options.maxTokens > 0 ? [{ id: 0, parentId: -1, tokenIds: [], tokens: [], cumulativeLogprob: 0, finish: null }] : [];
  }

  get live(): readonly LiveBeam[] {
    return this.liveBeams;
  }

  get done(): boolean {
    return this.liveBeams.length === 0;
  }

  /** Expands every live beam with its logits (`logits[i]` for `live[i]`); returns the new live beams. */
  step(logits: readonly Float32Array[], masks?: readonly (TokenBitmask | undefined)[]): readonly LiveBeam[] {
    if (logits.length !== this.liveBeams.length) throw new Error(`expected logits for ${this.liveBeams.length} beams, got ${logits.length}`);
    const { width, ignoreEos, includeStopStrInOutput } = this.options;
    const candidates: { parent: Beam; token: SampledToken; cumulative: number }[] = [];
    this.liveBeams.forEach((parent, index) => {
      for (const { token, logprob } of this.expand(logits[index]!, masks?.[index])) {
        const cumulative = parent.cumulativeLogprob + logprob;
        if (this.eos.has(token.tokenId) && !ignoreEos) {
          const keep = includeStopStrInOutput;
          this.finished.push({
            id: this.nextId++,
            parentId: parent.id,
            tokenIds: keep ? [...parent.tokenIds, token.tokenId] : [...parent.tokenIds],
            tokens: keep ? [...parent.tokens, token] : [...parent.tokens],
            cumulativeLogprob: cumulative,
            finish: { finishReason: "stop", stopReason: token.tokenId },
          });
        } else {
          candidates.push({ parent, token, cumulative });
        }
      }
    });
    // Ranked by the same score as the final results (it differs from the cumulative logprob only
    // for a candidate ending in EOS under ignore_eos). The sort is stable: ties keep beam order.
    const scored = candidates.map((candidate) => ({
      ...candidate,
      score: this.scoreOf(candidate.cumulative, candidate.parent.tokenIds.length + 1, candidate.token.tokenId),
    }));
    scored.sort((a, b) => b.score - a.score);
    this.steps++;
    const reachedLimit = this.steps >= this.options.maxTokens;
    const next: Beam[] = scored.slice(0, width).map(({ parent, token, cumulative }) => ({
      id: this.nextId++,
      parentId: parent.id,
      tokenIds: [...parent.tokenIds, token.tokenId],
      tokens: [...parent.tokens, token],
      cumulativeLogprob: cumulative,
      finish: reachedLimit ? { finishReason: "length", stopReason: null } : null,
    }));
    if (reachedLimit) {
      this.finished.push(...next);
      this.liveBeams = [];
    } else {
      this.liveBeams = next;
    }
    return this.liveBeams;
  }

  /** The best `width` sequences, best first (finished ones, and live ones as "length"). */
  results(): BeamResult[] {
    const pool: Beam[] = [...this.finished, ...this.liveBeams.map((beam) => ({ ...beam, finish: { finishReason: "length" as const, stopReason: null } }))];
    const scored = pool.map((beam) => ({ beam, score: this.score(beam) }));
    scored.sort((a, b) => b.score - a.score);
    return scored.slice(0, this.options.width).map(({ beam, score }) => {
      const endsWithEos = beam.tokenIds.length > 0 && this.eos.has(beam.tokenIds[beam.tokenIds.length - 1]!) && !this.options.ignoreEos;
      return {
        tokenIds: beam.tokenIds,
        tokens: beam.tokens,
        textTokenIds: endsWithEos ? beam.tokenIds.slice(0, -1) : beam.tokenIds,
        cumulativeLogprob: beam.cumulativeLogprob,
        score,
        finish: beam.finish ?? { finishReason: "length", stopReason: null },
      };
    });
  }

  private score(beam: Beam): number {
    return this.scoreOf(beam.cumulativeLogprob, beam.tokenIds.length, beam.tokenIds[beam.tokenIds.length - 1]);
  }

  /** vLLM's beam score: cumulative logprob / L^length_penalty, L = prompt + tokens, minus a final EOS. */
  private scoreOf(cumulativeLogprob: number, tokenCount: number, lastTokenId: number | undefined): number {
    let length = this.options.promptLength + tokenCount;
    if (lastTokenId !== undefined && this.eos.has(lastTokenId)) length--;
    return cumulativeLogprob / Math.max(length, 1) ** this.options.lengthPenalty;
  }

  /** The 2·width most likely next tokens of one beam, with raw logprobs (masked tokens excluded). */
  private expand(row: Float32Array, mask: TokenBitmask | undefined): { token: SampledToken; logprob: number }[] {
    const logits = mask ? Float32Array.from(row) : row;
    if (mask) applyTokenBitmask(logits, logits.length, mask);
    const logNormalizer = logSumExp(logits);
    const requested = this.options.logprobs === -1 ? logits.length : (this.options.logprobs ?? 0);
    const ranked = topKIndices(logits, Math.max(2 * this.options.width, requested), logits.length);
    const top = requested > 0 ? ranked.slice(0, requested).map((tokenId) => ({ tokenId, logprob: clampLogprob(logits[tokenId]! - logNormalizer) })) : undefined;
    const expansions: { token: SampledToken; logprob: number }[] = [];
    for (const tokenId of ranked.slice(0, 2 * this.options.width)) {
      const logprob = logits[tokenId]! - logNormalizer;
      if (logprob === -Infinity) break;
      const token: SampledToken = { tokenId, logprob: clampLogprob(logprob) };
      if (top) token.top = top;
      expansions.push({ token, logprob });
    }
    return expansions;
  }
}
