import type { SampledToken } from "../api.js";
import { tokenizeBadWords } from "../sampling/bad-words.js";
import type { TokenBitmask } from "../sampling/logits-processors.js";
import type { Sampler } from "../sampling/sampler.js";
import { SequenceState, type SequenceOptions } from "../sampling/sequence.js";
import type { Finish } from "../sampling/stop.js";
import type { Tokenizer } from "../tokenizer/types.js";
import { IncrementalDetokenizer } from "./detokenizer.js";

export interface ChoiceStreamOptions extends SequenceOptions {
  /** Detokenizes the output (and tokenizes bad_words when `badWordsTokenIds` is not given). */
  tokenizer: Tokenizer;
  sampler: Sampler;
}

/** What one decode step of a choice produced. */
export interface ChoiceStep {
  /** The sampled token, with its raw logprob and top alternatives. Always reported, even when its text is held back. */
  token: SampledToken;
  /** Newly visible text (may be empty). */
  text: string;
  /** Set when this token ended the choice. */
  finish: Finish | null;
}

/**
 * One choice of a sampling request from the first token to its finish: sampler, stop check and
 * detokenizer in vLLM's arrangement. The scheduler calls `step` once per decode step with this
 * sequence's logits (and the grammar's mask), until `finish` is set.
 */
export class ChoiceStream {
  readonly sequence: SequenceState;
  private readonly sampler: Sampler;
  private readonly detokenizer: IncrementalDetokenizer;

  constructor(options: ChoiceStreamOptions) {
    const badWordsTokenIds = options.badWordsTokenIds ?? tokenizeBadWords(options.tokenizer, options.params.badWords);
    this.sequence = new SequenceState({ ...options, badWordsTokenIds });
    this.sampler = options.sampler;
    const { params } = options;
    this.detokenizer = new IncrementalDetokenizer(options.tokenizer, {
      skipSpecialTokens: params.skipSpecialTokens,
      spacesBetweenSpecialTokens: params.spacesBetweenSpecialTokens,
      stop: params.stop,
      includeStopStrInOutput: params.includeStopStrInOutput,
      minTokens: params.minTokens,
    });
  }

  /** The n choices of a sampling request (choice i seeded with seed + i), bad_words tokenized once. */
  static forRequest(options: Omit<ChoiceStreamOptions, "choiceIndex">): ChoiceStream[] {
    const badWordsTokenIds = options.badWordsTokenIds ?? tokenizeBadWords(options.tokenizer, options.params.badWords);
    return Array.from({ length: options.params.n }, (_, choiceIndex) => new ChoiceStream({ ...options, badWordsTokenIds, choiceIndex }));
  }

  get finish(): Finish | null {
    return this.sequence.finish;
  }

  /** All visible text so far, including any part still held back. */
  get text(): string {
    return this.detokenizer.outputText;
  }

  /** Samples the next token from `logits` and records it. */
  step(logits: Float32Array, mask?: TokenBitmask): ChoiceStep {
    return this.accept(this.sampler.sample(this.sequence, logits, mask));
  }

  /** Records a token: stop check first (EOS, stop ids, length, repetition), then text and stop strings. */
  accept(token: SampledToken): ChoiceStep {
    const tokenFinish = this.sequence.append(token.tokenId);
    const stopString = this.detokenizer.update([token.tokenId], tokenFinish?.finishReason === "stop");
    // A stop string wins over the token-level reason, as in vLLM's output processor.
    if (stopString !== null) this.sequence.end({ finishReason: "stop", stopReason: stopString });
    const finish = this.sequence.finish;
    return { token, text: this.detokenizer.takeText(finish !== null), finish };
  }

  /** Ends the choice because the request was cancelled; returns the text still held back. */
  abort(): { text: string; finish: Finish } {
    const finish = this.sequence.finish ?? { finishReason: "abort" as const, stopReason: null };
    if (!this.sequence.finish) this.sequence.end(finish);
    return { text: this.detokenizer.takeText(true), finish };
  }
}
