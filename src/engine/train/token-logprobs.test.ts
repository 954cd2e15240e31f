import { describe, expect, it } from "vitest";
import { packTokenizedResults } from "./packing.js";
import type { TokenizedResult } from "./tokenize-groups.js";
import { turnTokenLogprobs } from "./token-logprobs.js";

function result(groupIndex: number, trajectoryIndex: number, tokenIds: number[], turn: { itemIndex: number; start: number; count: number }, extra: Partial<TokenizedResult> = {}): TokenizedResult {
  const mask = tokenIds.map((_, i) => (i >= turn.start && i < turn.start + turn.count ? 1 : 0));
  return {
    tokenIds,
    logprobs: tokenIds.map(() => -1),
    assistantMask: mask,
    inputPos: tokenIds.map((_, i) => i),
    advantage: 1,
    weight: 1,
    promptId: groupIndex + 1,
    promptLength: 0,
    groupIndex,
    trajectoryIndex,
    historyIndex: 0,
    fromExchanges: false,
    turns: [turn],
    ...extra,
  };
}

describe("the trainer's logprobs of sampled turns", () => {
  it("reads each turn's tokens from where packing placed them, one position earlier", () => {
    // Two results of one group sharing a 3-token prompt, and one of another group.
    const a = result(0, 0, [1, 2, 3, 10, 11], { itemIndex: 2, start: 3, count: 2 }, { promptLength: 3 });
    const b = result(0, 1, [1, 2, 3, 20, 21, 22], { itemIndex: 2, start: 3, count: 3 }, { promptLength: 3 });
    const c = result(1, 0, [5, 30], { itemIndex: 4, start: 1, count: 1 });
    const batch = packTokenizedResults([a, b, c], 16, { padTokenId: 0, random: () => 0 });
    expect(batch.rows).toHaveLength(1);
    const row = batch.rows[0]!;
    // The trainer's ℓ at position p scores token p + 1: use the next token's id as its value.
    const recomputed = new Float64Array(16).map((_, p) => -row.tokens[p + 1]! / 100);
    const turns = turnTokenLogprobs(row, recomputed);
    const byKey = Object.fromEntries(turns.map((turn) => [`${turn.groupIndex}/${turn.trajectoryIndex}/${turn.itemIndex}`, [...turn.logprobs]]));
    expect(byKey).toEqual({ "0/0/2": [-0.1, -0.11], "0/1/2": [-0.2, -0.21, -0.22], "1/0/4": [-0.3] });
  });

  it("marks tokens cut off at the row's end as not scored, and skips other histories", () => {
    const long = result(0, 0, [1, 2, 3, 4, 5, 6], { itemIndex: 1, start: 2, count: 4 });
    const extra = result(0, 0, [1, 7, 8], { itemIndex: 1, start: 1, count: 2 }, { historyIndex: 1 });
    const batch = packTokenizedResults([long, extra], 4, { padTokenId: 0, random: () => 0 });
    const turns = batch.rows.flatMap((row) => turnTokenLogprobs(row, new Float64Array(4).fill(-0.5)));
    expect(turns).toHaveLength(1);
    expect([...turns[0]!.logprobs]).toEqual([-0.5, -0.5, Number.NaN, Number.NaN]);
  });
});
