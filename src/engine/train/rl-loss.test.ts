import { describe, expect, it } from "vitest";
import type { RlLossInputs } from "./loss-inputs.js";
import { pearson, rlRowLoss, rlRowLossAt, type RlLossOptions } from "./rl-loss.js";

// The row of scripts/reference/train_math.py: two results (group 5: three trained tokens, the last
// without an old logprob; group 6: two trained tokens), in prediction layout.
const inputs: RlLossInputs = {
  targets: new Int32Array(8),
  mask: Uint8Array.from([0, 1, 1, 1, 0, 1, 1, 0]),
  oldLogprobs: Float64Array.from([NaN, -1.2, -0.7, NaN, NaN, -2.0, -0.3, NaN]),
  advantages: Float64Array.from([0, 1.3, 1.3, 1.3, 0, -0.8, -0.8, 0]),
  weights: Float64Array.from([0, 1.1, 1.1, 1.1, 0, 0.85, 0.85, 0]),
  groupIds: Int32Array.from([0, 5, 5, 5, 0, 6, 6, 0]),
};
const current = Float64Array.from([-0.5, -1.0, -0.9, -0.4, -3.0, -1.5, -0.35, -0.2]);
const entropies = Float64Array.from([2.0, 1.5, 0.7, 0.9, 3.0, 1.2, 0.4, 2.2]);
const refLogprobs = Float64Array.from([-0.6, -1.1, -1.0, -0.2, -2.5, -1.9, -0.5, -0.1]);

const CISPO: RlLossOptions = {
  objective: "cispo",
  epsilon: 1.0,
  epsilonHigh: 4.0,
  importanceSamplingLevel: "token",
  maxImportanceSamplingWeight: null,
  maskProbRatio: false,
  kimiK2Tau: null,
  klPenaltyCoef: 0,
  klPenaltySource: "current_learner",
  truncatedImportanceSampling: null,
};
const PPO: RlLossOptions = { ...CISPO, objective: "ppo", epsilon: 0.2, epsilonHigh: 0.2 };

/**
 * Expected values printed by scripts/reference/train_math.py (numpy, written from the spec): the
 * loss, and its gradient by central finite differences with the stop-gradient values frozen.
 */
const reference: [string, RlLossOptions, number, number[]][] = [
  ["CISPO, token ratios", CISPO, 0.2928448248470209, [0, -0.3493211888, -0.2341569954, -0.286, 0, 0.2242260928, 0.1293672017, 0]],
  ["CISPO, sequence ratios", { ...CISPO, importanceSamplingLevel: "sequence" }, 0.34271560460612704, [0, -0.286, -0.286, -0.286, 0, 0.1703158894, 0.1703158894, 0]],
  ["PPO, token ratios", PPO, -0.5097637008329883, [0, 0, -0.2341569953, -0.2860000001, 0, 0.2242260928, 0.1293672017, 0]],
  ["PPO, sequence ratios", { ...PPO, importanceSamplingLevel: "sequence" }, -0.517368221195813, [0, -0.2859999998, -0.2859999999, -0.2859999998, 0, 0.1703158893, 0.1703158894, 0]],
  ["PPO, average ratios", { ...PPO, importanceSamplingLevel: "average" }, -0.516626555431305, [0, -0.3176605943, -0.2600784977, -0.286, 0, 0.1972709911, 0.1498415456, 0]],
  ["PPO, geometric-average ratios", { ...PPO, importanceSamplingLevel: "geometric_average" }, -0.5170054941095653, [0, -0.3015165054, -0.2728688148, -0.286477064, 0, 0.1836745935, 0.1601822965, 0]],
  ["PPO, ratio capped at 1.1", { ...PPO, maxImportanceSamplingWeight: 1.1 }, -0.5557897936482058, [0, 0, -0.2341569953, -0.286, 0, 0, 0.1293672017, 0]],
  ["PPO, mask_prob_ratio", { ...PPO, maskProbRatio: true }, -0.28198979364820576, [0, 0, -0.2341569953, -0.286, 0, 0, 0.1293672018, 0]],
  ["CISPO, kimi_k2_tau 0.5", { ...CISPO, kimiK2Tau: 0.5 }, 0.17849380584025312, [0, -0.3224503282, -0.2521690719, -0.286, 0, 0.2942967468, 0.1253244767, 0]],
  ["PPO, KL 0.3 against the current learner", { ...PPO, klPenaltyCoef: 0.3 }, -0.5052309675103834, [0, 0, -0.2346973578, -0.3064599999, 0, 0.2486106803, 0.1313077098, 0]],
  ["CISPO, KL 0.3 against the sample", { ...CISPO, klPenaltyCoef: 0.3, klPenaltySource: "sample" }, 0.3067881659305629, [0, -0.3589946987, -0.219026851, -0.30052, 0, 0.2141359187, 0.1380994878, 0]],
  ["PPO, truncated importance sampling 1.05", { ...PPO, truncatedImportanceSampling: 1.05 }, -0.479576246857324, [0, 0, -0.1917115332, -0.2859999999, 0, 0.2354373974, 0.1230578889, 0]],
];

describe("rlRowLoss against independently computed numbers", () => {
  it.each(reference)("%s", (_name, options, loss, gradient) => {
    const result = rlRowLoss(inputs, current, options, { refLogprobs });
    expect(result.loss).toBeCloseTo(loss, 12);
    result.gradient.forEach((value, t) => expect(value).toBeCloseTo(gradient[t]!, 8));
    expect(result.numTrainableTokens).toBe(5);
  });

  it("truncates by the precalculated-vs-sampler ratio when the sampler's logprobs were kept", () => {
    const precalculated = { ...inputs, oldLogprobs: Float64Array.from([NaN, -1.1, -0.8, -0.5, NaN, -1.9, -0.32, NaN]), originalLogprobs: Float64Array.from([NaN, -1.25, -0.6, NaN, NaN, -2.2, -0.3, NaN]) };
    const result = rlRowLoss(precalculated, current, { ...CISPO, truncatedImportanceSampling: 1.05 });
    expect(result.loss).toBeCloseTo(0.2721420658605972, 12);
    [0, -0.3318828267, -0.2118740111, -0.2859999999, 0, 0.2130325668, 0.1293672017, 0].forEach((value, t) => expect(result.gradient[t]).toBeCloseTo(value, 8));
  });

  it("reports k̄ as kl_policy_ref, the weighted entropy and probs_corr", () => {
    expect(rlRowLoss(inputs, current, { ...PPO, klPenaltyCoef: 0.3 }, { refLogprobs }).klPolicyRef).toBeCloseTo(0.11, 12);
    expect(rlRowLoss(inputs, current, { ...CISPO, klPenaltyCoef: 0.3, klPenaltySource: "sample" }, { refLogprobs }).klPolicyRef).toBeCloseTo(0.02, 12);
    const plain = rlRowLoss(inputs, current, CISPO, { entropies });
    expect(plain.klPolicyRef).toBeNull();
    expect(plain.entropy).toBeCloseTo(0.954, 12);
    expect(rlRowLoss(inputs, current, CISPO).entropy).toBeNull();
    // numpy corrcoef of exp(old) and exp(new) over the four tokens with old logprobs.
    expect(plain.probsCorr).toBeCloseTo(0.9650061596042568, 12);
  });

  it("needs reference logprobs for the KL penalty and inputs of the row's length", () => {
    expect(() => rlRowLoss(inputs, current, { ...PPO, klPenaltyCoef: 0.1 })).toThrow(/reference logprobs/);
    expect(() => rlRowLoss(inputs, current.subarray(0, 7), PPO)).toThrow(/7 entries/);
  });

  it("is zero with a zero gradient on a row without trained tokens", () => {
    const empty = { ...inputs, mask: new Uint8Array(8) };
    const result = rlRowLoss(empty, current, PPO, { entropies });
    expect(result.loss).toBe(0);
    expect([...result.gradient]).toEqual(new Array(8).fill(0));
    expect(result.entropy).toBe(0);
    expect(result.probsCorr).toBe(0);
  });
});

describe("rlRowLoss gradients against finite differences", () => {
  // A deterministic pseudo-random row: three results, some tokens without old logprobs.
  function randomRow(seed: number) {
    let state = seed;
    const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const n = 14;
    const row: RlLossInputs = {
      targets: new Int32Array(n),
      mask: Uint8Array.from({ length: n }, (_, t) => (t % 5 === 0 ? 0 : 1)),
      oldLogprobs: Float64Array.from({ length: n }, (_, t) => (t % 7 === 3 ? NaN : -0.2 - 2 * random())),
      advantages: Float64Array.from({ length: n }, (_, t) => (t < 5 ? 1.4 : t < 10 ? -0.7 : 0.9)),
      weights: Float64Array.from({ length: n }, () => 0.5 + random()),
      groupIds: Int32Array.from({ length: n }, (_, t) => (t < 5 ? 11 : t < 10 ? 12 : 13)),
      originalLogprobs: Float64Array.from({ length: n }, (_, t) => (t % 4 === 1 ? NaN : -0.2 - 2 * random())),
    };
    const logprobs = Float64Array.from(row.oldLogprobs, (old) => (Number.isNaN(old) ? -1 : old) + (random() - 0.5) * 0.8);
    const ref = Float64Array.from({ length: n }, () => -0.2 - 2 * random());
    return { row, logprobs, ref };
  }

  const levels = ["token", "sequence", "average", "geometric_average"] as const;
  const variants: [string, Partial<RlLossOptions>][] = [
    ["plain", {}],
    ["capped", { maxImportanceSamplingWeight: 1.15 }],
    ["masked ratio", { maskProbRatio: true }],
    ["kimi tau", { kimiK2Tau: 0.3 }],
    ["KL current learner", { klPenaltyCoef: 0.2 }],
    ["KL sample", { klPenaltyCoef: 0.2, klPenaltySource: "sample" }],
    ["truncated IS", { truncatedImportanceSampling: 1.1 }],
    ["everything", { maxImportanceSamplingWeight: 1.3, kimiK2Tau: 0.2, klPenaltyCoef: 0.1, truncatedImportanceSampling: 1.2 }],
  ];
  const cases = [PPO, CISPO].flatMap((base) => levels.flatMap((level) => variants.map(([name, extra]) => [`${base.objective} ${level} ${name}`, { ...base, importanceSamplingLevel: level, ...extra }] as const)));

  it.each(cases)("%s", (_name, options) => {
    for (const seed of [1, 2, 3]) {
      const { row, logprobs, ref } = randomRow(seed);
      for (const withOriginal of [false, true]) {
        const rowInputs = withOriginal ? row : { ...row, originalLogprobs: undefined };
        const analytic = rlRowLoss(rowInputs, logprobs, options, { refLogprobs: ref }).gradient;
        const h = 1e-6;
        for (let t = 0; t < logprobs.length; t++) {
          const up = Float64Array.from(logprobs);
          const down = Float64Array.from(logprobs);
          up[t] = up[t]! + h;
          down[t] = down[t]! - h;
          const numeric = (rlRowLossAt(rowInputs, up, logprobs, options, { refLogprobs: ref }).loss - rlRowLossAt(rowInputs, down, logprobs, options, { refLogprobs: ref }).loss) / (2 * h);
          expect(analytic[t]).toBeCloseTo(numeric, 7);
        }
      }
    }
  });
});

describe("pearson", () => {
  it("is 1 for a linear relation, -1 for an inverse one and 0 when undefined", () => {
    expect(pearson([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(pearson([1, 2, 3], [3, 2, 1])).toBeCloseTo(-1, 12);
    expect(pearson([1], [1])).toBe(0);
    expect(pearson([1, 1, 1], [1, 2, 3])).toBe(0);
  });
});
