import { packTokenizedResults, type PackedRow } from "../engine/train/packing.js";
import type { TokenizedResult } from "../engine/train/tokenize-groups.js";

export interface TestCompletion {
  tokens: number[];
  advantage: number;
  /** The sampler's logprob of each completion token (default: none, NaN). */
  logprobs?: number[];
}

/**
 * One packed row of completions of a single prompt, made by the real packer. As the tokenizer
 * does (`docs/api/training.md#rl-tokenization` step 7), the shared part stops one token before the first trained
 * one: the row holds the prompt's first tokens once, then per completion the prompt's last token
 * and the completion, attending to the shared part and to itself, at their original positions.
 */
export function packedTestRow(prompt: number[], completions: readonly TestCompletion[], sequenceLength?: number): PackedRow {
  const results: TokenizedResult[] = completions.map((completion, index) => ({
    tokenIds: [...prompt, ...completion.tokens],
    logprobs: [...prompt.map(() => NaN), ...(completion.logprobs ?? completion.tokens.map(() => NaN))],
    assistantMask: [...prompt.map(() => 0), ...completion.tokens.map(() => 1)],
    inputPos: Array.from({ length: prompt.length + completion.tokens.length }, (_, i) => i),
    advantage: completion.advantage,
    weight: 1 / (completion.tokens.length + 1e-6),
    promptId: 1,
    promptLength: prompt.length - 1,
    groupIndex: 0,
    trajectoryIndex: index,
  }));
  const length = sequenceLength ?? prompt.length + completions.reduce((sum, completion) => sum + completion.tokens.length + 1, 0);
  const batch = packTokenizedResults(results, length, { padTokenId: 0, random: () => 0 });
  if (batch.rows.length !== 1) throw new Error(`the completions did not fit one row of ${length}`);
  return batch.rows[0]!;
}
