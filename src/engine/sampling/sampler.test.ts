import { describe, expect, it } from "vitest";
import type { SamplingParams } from "./params.js";
import { defaultSamplingParams } from "./params.js";
import { Rng } from "./rng.js";
import { Sampler } from "./sampler.js";
import { SequenceState, type SequenceOptions } from "./sequence.js";

/** Logits whose softmax is exactly `probs`. */
const logitsOf = (probs: number[]) => Float32Array.from(probs, (p) => (p > 0 ? Math.log(p) : -Infinity));
const EOS = 0;

function sequence(params: Partial<SamplingParams>, options: Partial<SequenceOptions> = {}): SequenceState {
  return new SequenceState({ params: defaultSamplingParams({ maxTokens: 1000, ...params }), promptTokenIds: [9], eosTokenId: EOS, ...options });
}

/** Frequencies of each token over `count` draws (the sequence is never appended to, so every draw sees the same state). */
function frequencies(sampler: Sampler, state: SequenceState, logits: Float32Array, count: number): number[] {
  const counts = new Array(logits.length).fill(0);
  for (let i = 0; i < count; i++) counts[sampler.sample(state, logits).tokenId]++;
  return counts.map((c) => c / count);
}

function expectDistribution(observed: number[], expected: number[]): void {
  expect(observed.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    if (expected[i] === 0) expect(observed[i], `token ${i}`).toBe(0);
    else expect(Math.abs(observed[i]! - expected[i]!), `token ${i}: ${observed[i]} vs ${expected[i]}`).toBeLessThan(0.015);
  }
}

const normalize = (weights: number[]) => {
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / total);
};

// A five-token distribution used by the filter tests.
const PROBS = [0.5, 0.2, 0.15, 0.1, 0.05];

describe("Sampler: logprobs", () => {
  const sampler = new Sampler(Rng.fromSeed(1));

  it("reports the raw log-softmax of the sampled token and the true top-k, best first", () => {
    const logits = Float32Array.from([1, 2, 3, 0]);
    const lse = Math.log(Math.E + Math.E ** 2 + Math.E ** 3 + 1);
    const token = sampler.sample(sequence({ temperature: 0, logprobs: 2 }), logits);
    expect(token.tokenId).toBe(2);
    expect(token.logprob).toBeCloseTo(3 - lse, 6);
    expect(token.top!.map((t) => t.tokenId)).toEqual([2, 1]);
    expect(token.top![1]!.logprob).toBeCloseTo(2 - lse, 6);
  });

  it("takes logprobs before bias, penalties and temperature", () => {
    const logits = logitsOf([0.25, 0.75]);
    const token = sampler.sample(sequence({ temperature: 0, logprobs: 0, logitBias: new Map([[0, 50]]), repetitionPenalty: 3 }), logits);
    expect(token.tokenId).toBe(0);
    expect(token.logprob).toBeCloseTo(Math.log(0.25), 6);
    expect(token.top).toBeUndefined();
  });

  it("shows tokens the structured-output mask forbids as -9999, and never samples them", () => {
    const logits = Float32Array.from([5, 1, 0, 0]);
    const mask = Int32Array.from([0b0110]);
    const token = sampler.sample(sequence({ temperature: 0, logprobs: 3 }), logits, mask);
    expect(token.tokenId).toBe(1);
    const lse = Math.log(Math.E + 1);
    expect(token.logprob).toBeCloseTo(1 - lse, 6);
    expect(token.top!.map((t) => [t.tokenId, t.logprob === -9999])).toEqual([
      [1, false],
      [2, false],
      [0, true],
    ]);
  });

  it("skips the logprob (NaN) when the request asked for none", () => {
    const token = sampler.sample(sequence({ temperature: 0 }), Float32Array.from([1, 2]));
    expect(token.tokenId).toBe(1);
    expect(token.logprob).toBeNaN();
    expect(token.top).toBeUndefined();
  });

  it("returns the whole vocabulary sorted for logprobs = -1", () => {
    const token = sampler.sample(sequence({ temperature: 0, logprobs: -1 }), Float32Array.from([0.5, 3, -1, 2]));
    expect(token.top!.map((t) => t.tokenId)).toEqual([1, 3, 0, 2]);
  });
});

describe("Sampler: logits processors (greedy)", () => {
  const sampler = new Sampler(Rng.fromSeed(2));
  const greedy = (params: Partial<SamplingParams>, logits: number[], options?: Partial<SequenceOptions>) => sampler.sample(sequence({ temperature: 0, ...params }, options), Float32Array.from(logits)).tokenId;

  it("picks the argmax, the lower id on ties", () => {
    expect(greedy({}, [0, 3, 3, 1])).toBe(1);
  });

  it("allowed_token_ids restricts the choice", () => {
    expect(greedy({ allowedTokenIds: [2, 3] }, [0, 3, 1, 2])).toBe(3);
  });

  it("bad_words ban a one-token word always and a longer word after its prefix", () => {
    const state = sequence({ temperature: 0 }, { badWordsTokenIds: [[1], [2, 3]] });
    expect(sampler.sample(state, Float32Array.from([0, 9, 1, 5])).tokenId).toBe(3);
    state.append(2);
    expect(sampler.sample(state, Float32Array.from([0, 9, 1, 5])).tokenId).toBe(2);
  });

  it("min_tokens bans EOS, extra EOS ids and stop ids until enough tokens exist, even under ignore_eos", () => {
    const state = sequence({ temperature: 0, minTokens: 1, ignoreEos: true, stopTokenIds: [3] }, { extraEosTokenIds: [2] });
    expect(sampler.sample(state, Float32Array.from([9, 1, 8, 7])).tokenId).toBe(1);
    state.append(1);
    expect(sampler.sample(state, Float32Array.from([9, 1, 8, 7])).tokenId).toBe(0);
  });

  it("logit_bias is added before the penalties (bias, then repetition)", () => {
    // Token 1 is in the prompt. Bias first: (2 + 2) / 2 = 2 < 2.5, so token 0 wins.
    // (Repetition first would give 2 / 2 + 2 = 3 and token 1.)
    expect(greedy({ logitBias: new Map([[1, 2]]), repetitionPenalty: 2 }, [2.5, 2], { promptTokenIds: [1] })).toBe(0);
  });

  it("applies repetition, frequency and presence penalties with vLLM's formulas", () => {
    // Prompt [1]; output so far [2, 2]; rep 2, freq 0.2, presence 0.2. Token 0 is unseen at 1.0.
    const state = sequence({ temperature: 0, repetitionPenalty: 2, frequencyPenalty: 0.2, presencePenalty: 0.2 }, { promptTokenIds: [1] });
    state.append(2);
    state.append(2);
    const pick = (logits: number[]) => sampler.sample(state, Float32Array.from(logits)).tokenId;
    // Prompt token 1: 2.1 / 2 = 1.05 beats 1.0; 1.9 / 2 = 0.95 does not.
    expect(pick([1, 2.1, -5])).toBe(1);
    expect(pick([1, 1.9, -5])).toBe(0);
    // Output token 2: 3.0 / 2 − 0.2·2 − 0.2 = 0.9 loses (without presence it would be 1.1);
    // 3.4 / 2 − 0.6 = 1.1 wins.
    expect(pick([1, -5, 3.0])).toBe(0);
    expect(pick([1, -5, 3.4])).toBe(2);
    // A negative logit is multiplied: −0.2 · 2 − 0.6 = −1.0 loses to −0.9.
    expect(pick([-0.9, -5, -0.2])).toBe(0);
  });

  it("frequency and presence ignore the prompt", () => {
    expect(greedy({ frequencyPenalty: 2, presencePenalty: 2 }, [1, 1.5], { promptTokenIds: [1, 1, 1] })).toBe(1);
  });

  it("a bias cannot bring back a token that an earlier step removed", () => {
    const huge = new Map([
      [0, 100],
      [3, 100],
    ]);
    expect(greedy({ minTokens: 1, logitBias: huge, allowedTokenIds: [0, 1, 2] }, [5, 1, 2, 9])).toBe(2);
  });

  it("never modifies the caller's logits", () => {
    const logits = Float32Array.from([1, 2, 3]);
    sampler.sample(sequence({ temperature: 0.5, topK: 1, logitBias: new Map([[0, 5]]), repetitionPenalty: 2 }, { promptTokenIds: [2] }), logits);
    expect([...logits]).toEqual([1, 2, 3]);
  });

  it("falls back to the model's best allowed token when the request's rules leave none", () => {
    const state = sequence({ temperature: 0, allowedTokenIds: [0], minTokens: 1 });
    expect(sampler.sample(state, Float32Array.from([1, 2, 3]), Int32Array.from([0b011])).tokenId).toBe(1);
  });
});

describe("Sampler: random sampling distributions (fixed seed)", () => {
  const sampler = new Sampler(Rng.fromSeed(3));
  const draws = 20_000;
  const dist = (params: Partial<SamplingParams>) => frequencies(sampler, sequence({ seed: 11, ...params }), logitsOf(PROBS), draws);

  it("samples the softmax itself at temperature 1", () => {
    expectDistribution(dist({}), PROBS);
  });

  it("divides by the temperature (T = 2 flattens to p^(1/2))", () => {
    expectDistribution(dist({ temperature: 2 }), normalize(PROBS.map((p) => Math.sqrt(p))));
  });

  it("min_p keeps tokens with p ≥ min_p · p_max", () => {
    expectDistribution(dist({ minP: 0.25 }), normalize([0.5, 0.2, 0.15, 0, 0]));
  });

  it("min_p is measured after temperature", () => {
    // At T = 2: p ∝ sqrt(probs) = .707, .447, .387, .316, .224; min_p 0.5 → threshold .354 keeps three.
    expectDistribution(dist({ temperature: 2, minP: 0.5 }), normalize([0.5, 0.2, 0.15, 0, 0].map((p) => Math.sqrt(p))));
  });

  it("top_k keeps the k most likely", () => {
    expectDistribution(dist({ topK: 2 }), normalize([0.5, 0.2, 0, 0, 0]));
  });

  it("top_p keeps the smallest most-likely set reaching p", () => {
    expectDistribution(dist({ topP: 0.55 }), normalize([0.5, 0.2, 0, 0, 0]));
    expectDistribution(dist({ topP: 0.45 }), [1, 0, 0, 0, 0]);
    expectDistribution(dist({ topP: 0.9 }), normalize([0.5, 0.2, 0.15, 0.1, 0]));
  });

  it("top_p applies to the mass left after top_k", () => {
    // top_k 3 renormalizes to .588, .235, .176; top_p 0.8 then needs the first two (.588 < .8 ≤ .824).
    expectDistribution(dist({ topK: 3, topP: 0.8 }), normalize([0.5, 0.2, 0, 0, 0]));
  });

  it("keeps every token tied with the k-th for top_k", () => {
    const probs = [0.4, 0.2, 0.2, 0.2];
    expectDistribution(frequencies(sampler, sequence({ seed: 1, topK: 2 }), logitsOf(probs), draws), probs);
  });

  it("top_p over a large vocabulary samples exactly the nucleus, in proportion", () => {
    const rng = Rng.fromSeed(8);
    const size = 1000;
    const logits = Float32Array.from({ length: size }, () => rng.nextFloat() * 6);
    const weights = [...logits].map((x) => Math.exp(x));
    const total = weights.reduce((a, b) => a + b, 0);
    const order = [...weights.keys()].sort((a, b) => weights[b]! - weights[a]!);
    const nucleus = new Set<number>();
    let ahead = 0;
    for (const id of order) {
      if (ahead >= 0.3 * total) break;
      nucleus.add(id);
      ahead += weights[id]!;
    }
    const observed = frequencies(sampler, sequence({ seed: 4, topP: 0.3 }), logits, 8000);
    const expected = weights.map((w, id) => (nucleus.has(id) ? w / ahead : 0));
    for (let id = 0; id < size; id++) if (!nucleus.has(id)) expect(observed[id], `token ${id} is outside the nucleus`).toBe(0);
    // Group the nucleus into ten buckets so each has enough draws to compare.
    const members = [...nucleus];
    for (let b = 0; b < 10; b++) {
      const bucket = members.filter((_, i) => i % 10 === b);
      const sum = (values: number[]) => bucket.reduce((acc, id) => acc + values[id]!, 0);
      expect(Math.abs(sum(observed) - sum(expected))).toBeLessThan(0.015);
    }
  });

  it("samples the unseeded path from the shared RNG too", () => {
    expectDistribution(frequencies(sampler, sequence({}), logitsOf(PROBS), draws), PROBS);
  });
});

describe("Sampler: determinism", () => {
  const run = (sampler: Sampler, seed: number | null, choiceIndex: number, steps = 40) => {
    const state = sequence({ seed, topP: 0.95, topK: 50, temperature: 0.9 }, { choiceIndex });
    const logits = new Float32Array(500);
    const out: number[] = [];
    for (let step = 0; step < steps; step++) {
      for (let i = 0; i < logits.length; i++) logits[i] = Math.sin(i * 0.37 + step) * 3;
      const { tokenId } = sampler.sample(state, logits);
      state.append(tokenId);
      out.push(tokenId);
    }
    return out;
  };

  it("repeats a seeded sequence exactly, whatever else the sampler served in between", () => {
    const shared = new Sampler(Rng.fromSeed(99));
    const first = run(shared, 1234, 0);
    run(shared, null, 0);
    expect(run(shared, 1234, 0)).toEqual(first);
    expect(run(new Sampler(), 1234, 0)).toEqual(first);
  });

  it("gives choice i the stream of seed + i", () => {
    const sampler = new Sampler();
    expect(run(sampler, 1234, 1)).toEqual(run(sampler, 1235, 0));
    expect(run(sampler, 1234, 1)).not.toEqual(run(sampler, 1234, 0));
  });
});
