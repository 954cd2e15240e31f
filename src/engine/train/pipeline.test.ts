import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { chatmlTemplate } from "../../testing/chatml.js";
import {
  AdamW,
  autoPackedSequenceLength,
  buildSftBatches,
  clipGradNorm,
  OPTIMIZER_SETTINGS,
  packTokenizedResults,
  resolveRlConfig,
  resolveSftConfig,
  sftBatchPlan,
  rlLossInputs,
  rlLossOptions,
  rlRowLoss,
  rowLearningRate,
  sftBatchLoss,
  sftExampleFromJson,
  sftLossInputs,
  tokenizeSftExample,
  tokenizeTrajectoryGroups,
  type ChatTemplateDeps,
  type ChoiceJson,
  type TrajectoryGroupJson,
} from "./index.js";

/**
 * The library end to end on a real (if tiny) model: a bigram language model whose logits are the
 * trainable parameters, with its exact log-softmax backward. RL raises the rewarded answer's
 * probability and lowers the other; SFT lowers the cross-entropy of its examples.
 */
class BigramModel {
  readonly logits: Float32Array;

  constructor(readonly vocab: number) {
    this.logits = new Float32Array(vocab * vocab);
  }

  /** ℓ_p = log softmax(logits[tokens[p]])[targets[p]] for the first `length` positions. */
  logprobs(tokens: Int32Array, targets: Int32Array, length: number): Float64Array {
    const out = new Float64Array(tokens.length);
    for (let p = 0; p < length; p++) out[p] = this.logSoftmax(tokens[p]!)[targets[p]]!;
    return out;
  }

  /** dLoss/dlogits from dLoss/dℓ: g·(onehot(target) − softmax). */
  backward(tokens: Int32Array, targets: Int32Array, gradient: Float64Array, into: Float32Array): void {
    for (let p = 0; p < gradient.length; p++) {
      const g = gradient[p]!;
      if (g === 0) continue;
      const row = this.logSoftmax(tokens[p]!);
      for (let j = 0; j < this.vocab; j++) into[tokens[p]! * this.vocab + j]! -= g * Math.exp(row[j]!);
      into[tokens[p]! * this.vocab + targets[p]!]! += g;
    }
  }

  private logSoftmax(previous: number): Float64Array {
    const row = this.logits.subarray(previous * this.vocab, (previous + 1) * this.vocab);
    const max = Math.max(...row);
    const logSum = Math.log(row.reduce((sum, value) => sum + Math.exp(value - max), 0)) + max;
    return Float64Array.from(row, (value) => value - logSum);
  }

  sequenceLogprob(tokens: number[], from: number): number {
    let total = 0;
    for (let p = from; p < tokens.length; p++) total += this.logSoftmax(tokens[p - 1]!)[tokens[p]!]!;
    return total;
  }
}

const tokenizer = new ByteTokenizer();
const template = chatmlTemplate();
const deps: ChatTemplateDeps = { tokenizer, render: template.render, chatTemplate: template.source };
const prompt = tokenizer.encode("<|im_start|>user\nIs it?<|im_end|>\n<|im_start|>assistant\n");
const answerIds = (text: string) => [...new TextEncoder().encode(text), tokenizer.tokenId("<|im_end|>")!];

/** A Choice as the sampler would report it under the current weights. */
function sampledChoice(model: BigramModel, text: string): ChoiceJson {
  const ids = answerIds(text);
  const context = [...prompt, ...ids];
  return {
    message: { role: "assistant", content: text },
    logprobs: { content: ids.map((id, i) => ({ token: `token_id:${id}`, logprob: model.sequenceLogprob(context.slice(0, prompt.length + i + 1), prompt.length + i) })) },
  };
}

describe("the trainer math, end to end on a bigram model", () => {
  it("RL moves probability towards the rewarded answer", () => {
    const model = new BigramModel(tokenizer.vocabSize);
    const optimizer = new AdamW([model.logits.length]);
    optimizer.beginJob("rl");
    const config = resolveRlConfig({ learning_rate: 0.05, ppo: true });
    const logprobOf = (text: string) => model.sequenceLogprob([...prompt, ...answerIds(text)], prompt.length);
    const before = { yes: logprobOf("yes"), no: logprobOf("no") };
    for (let job = 0; job < 4; job++) {
      const groups: TrajectoryGroupJson[] = [
        {
          trajectories: [
            { reward: 1, messages_and_choices: [{ role: "user", content: "Is it?" }, sampledChoice(model, "yes")] },
            { reward: 0, messages_and_choices: [{ role: "user", content: "Is it?" }, sampledChoice(model, "no")] },
          ],
        },
      ];
      const { results } = tokenizeTrajectoryGroups(groups, deps, { scaleRewards: config.scale_rewards, allowTrainingWithoutLogprobs: false });
      const length = config.packed_sequence_length ?? autoPackedSequenceLength(Math.max(...results.map((r) => r.tokenIds.length)), 4096);
      const batch = packTokenizedResults(results, length, { padTokenId: tokenizer.eosTokenId, advantageBalance: config.advantage_balance });
      expect(batch.rows).toHaveLength(1);
      for (const row of batch.rows) {
        const inputs = rlLossInputs(row);
        const logprobs = model.logprobs(row.tokens, inputs.targets, row.length);
        const loss = rlRowLoss(inputs, logprobs, rlLossOptions(config));
        // The sampler's logprobs are the current policy's (uniform at first, so no correlation is defined).
        expect(loss.probsCorr).toBeCloseTo(job === 0 ? 0 : 1, 6);
        expect(loss.numTrainableTokens).toBe(answerIds("yes").length + answerIds("no").length);
        const grads = [new Float32Array(model.logits.length)];
        model.backward(row.tokens, inputs.targets, loss.gradient, grads[0]!);
        expect(clipGradNorm(grads, OPTIMIZER_SETTINGS.rl.maxGradNorm)).toBeGreaterThan(0);
        optimizer.step([model.logits], grads, rowLearningRate(config.learning_rate, row, config.num_trajectories_learning_rate_multiplier_power));
      }
    }
    expect(logprobOf("yes")).toBeGreaterThan(before.yes + 0.5);
    expect(logprobOf("no")).toBeLessThan(before.no - 0.5);
  });

  it("SFT lowers the cross-entropy of its examples", () => {
    const model = new BigramModel(tokenizer.vocabSize);
    const optimizer = new AdamW([model.logits.length]);
    optimizer.beginJob("sft");
    const lines = [
      {
        messages: [
          { role: "user", content: "ping" },
          { role: "assistant", content: "pong" },
        ],
      },
      {
        messages: [
          { role: "user", content: "hello" },
          { role: "assistant", content: "hello world" },
        ],
      },
      {
        messages: [
          { role: "user", content: "a" },
          { role: "assistant", content: "b" },
        ],
      },
    ];
    const config = resolveSftConfig({ learning_rate: 0.05 }, lines.length);
    const rows = lines.map((line, i) => tokenizeSftExample(sftExampleFromJson(line, ["train.jsonl", i]), deps, config.assistant_turns));
    const losses: number[] = [];
    for (let epoch = 0; epoch < 5; epoch++) {
      const { batches } = buildSftBatches(rows, sftBatchPlan(config), 4096);
      expect(batches.map((b) => b.numTrajectories)).toEqual([2, 1]);
      let epochLoss = 0;
      for (const batch of batches) {
        const inputs = batch.rows.map(sftLossInputs);
        const logprobs = batch.rows.map((row, i) => model.logprobs(row.tokens, inputs[i]!.targets, row.tokens.length));
        const loss = sftBatchLoss(inputs.map((input, i) => ({ mask: input.mask, logprobs: logprobs[i]! })));
        epochLoss += loss.loss;
        const grads = [new Float32Array(model.logits.length)];
        batch.rows.forEach((row, i) => model.backward(row.tokens, inputs[i]!.targets, loss.gradients[i]!, grads[0]!));
        clipGradNorm(grads, OPTIMIZER_SETTINGS.sft.maxGradNorm);
        optimizer.step([model.logits], grads, batch.learningRate);
      }
      losses.push(epochLoss);
    }
    for (let i = 1; i < losses.length; i++) expect(losses[i]).toBeLessThan(losses[i - 1]!);
  });
});
