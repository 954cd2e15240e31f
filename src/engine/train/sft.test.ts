import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { chatmlTemplate } from "../../testing/chatml.js";
import type { ChatTemplateDeps, RenderChat } from "./chat-render.js";
import { resolveSftConfig, SftConfigSchema, sftBatchPlan } from "./sft-config.js";
import { detectResponseMarkers, IGNORE, responseOnlyLabels, sftExampleFromJson, tokenizeSftExample, type SftRow } from "./sft-tokenize.js";
import { buildSftBatches, sftBatchLoss, sftLossInputs } from "./sft.js";

const tokenizer = new ByteTokenizer();
const template = chatmlTemplate();
const deps: ChatTemplateDeps = { tokenizer, render: template.render, chatTemplate: template.source };
const enc = (text: string) => tokenizer.encode(text);
const ignored = (ids: number[]) => ids.map(() => IGNORE);

const conversation = sftExampleFromJson(
  {
    messages: [
      { role: "system", content: "S" },
      { role: "user", content: "Q" },
      { role: "assistant", content: "hi" },
      { role: "user", content: "Q2" },
      { role: "assistant", content: "ok" },
    ],
  },
  ["train.jsonl", 0],
);

describe("SFT labels", () => {
  it('assistant_turns "all" trains every assistant reply with its end of turn', () => {
    const row = tokenizeSftExample(conversation, deps, "all");
    const prefix = enc("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n");
    const reply1 = enc("hi<|im_end|>\n");
    const middle = enc("<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n");
    const reply2 = enc("ok<|im_end|>\n");
    expect([...row.tokens]).toEqual([...prefix, ...reply1, ...middle, ...reply2]);
    expect([...row.labels]).toEqual([...ignored(prefix), ...reply1, ...ignored(middle), ...reply2]);
    expect(row.numTrainableTokens).toBe(reply1.length + reply2.length);
  });

  it('assistant_turns "last" trains only what follows the generation prompt', () => {
    const row = tokenizeSftExample(conversation, deps, "last");
    const prompt = enc("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nhi<|im_end|>\n<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n");
    const target = enc("ok<|im_end|>\n");
    expect([...row.tokens]).toEqual([...prompt, ...target]);
    expect([...row.labels]).toEqual([...ignored(prompt), ...target]);
  });

  it('"last" fails when the full rendering does not start with the generation prompt', () => {
    const renamed: RenderChat = (messages, tools, options) => template.render(messages, tools, options).replaceAll("<|im_start|>assistant\nok", "<|im_start|>bot\nok");
    expect(() => tokenizeSftExample(conversation, { ...deps, render: renamed }, "last", ["train.jsonl", 4])).toThrow(/train\.jsonl\.4\.messages: cannot isolate the final assistant response/);
  });

  it("finds response spans between markers, never labels the first token, and stops at the next instruction", () => {
    // markers: instruction [1, 2], response [3]
    expect([...responseOnlyLabels([3, 9, 9, 1, 2, 8, 3, 7], [1, 2], [3])]).toEqual([IGNORE, 9, 9, IGNORE, IGNORE, IGNORE, IGNORE, 7]);
    expect([...responseOnlyLabels([5, 6], [1], [3])]).toEqual([IGNORE, IGNORE]);
  });

  it("detects the markers of the common template families", () => {
    expect(detectResponseMarkers("{{ '<|im_start|>' + message.role }}")).toEqual({ instruction: "<|im_start|>user\n", response: "<|im_start|>assistant\n" });
    expect(detectResponseMarkers("<|start_header_id|>").response).toBe("<|start_header_id|>assistant<|end_header_id|>\n\n");
    expect(detectResponseMarkers("<start_of_turn>").response).toBe("<start_of_turn>model\n");
    expect(detectResponseMarkers("[INST]")).toEqual({ instruction: "[INST]", response: "[/INST]" });
    expect(() => detectResponseMarkers("{{ messages }}")).toThrow(/assistant_turns='last'/);
  });
});

describe("sftExampleFromJson", () => {
  it("accepts a train.jsonl line, wrapping bare tools and replacing null content", () => {
    const example = sftExampleFromJson(
      {
        messages: [
          { role: "user", content: null },
          { role: "assistant", content: "a" },
        ],
        tools: [{ name: "f" }],
      },
      ["x", 1],
    );
    expect(example.messages[0]!.content).toBe("");
    expect(example.tools).toEqual([{ type: "function", function: { name: "f" } }]);
  });

  it("rejects what the format does not allow, naming the place", () => {
    expect(() => sftExampleFromJson([], ["train.jsonl", 3])).toThrow(/train\.jsonl\.3: an SFT example must be an object/);
    expect(() => sftExampleFromJson({ messages: [] }, ["l"])).toThrow(/l\.messages: must be a non-empty list/);
    expect(() => sftExampleFromJson({ messages: [{ role: "robot", content: "x" }] }, ["l"])).toThrow(/l\.messages\.0/);
    expect(() => sftExampleFromJson({ messages: [{ role: "user", content: "x" }] }, ["l"])).toThrow(/last message must be an assistant/);
    expect(() => sftExampleFromJson({ messages: [{ role: "assistant", content: "x" }], tools: {} }, ["l"])).toThrow(/l\.tools/);
  });
});

describe("SFT config and batches", () => {
  it('defaults to batches of 2 ("auto"), 5e-5 and all assistant turns', () => {
    const defaults = { batch_size: 2, learning_rates: [5e-5, 5e-5], assistant_turns: "all", metric_logging: null, experimental_config: {} };
    expect(resolveSftConfig(undefined, 3)).toEqual(defaults);
    expect(resolveSftConfig({ batch_size: "auto", learning_rate: null }, 4)).toEqual(defaults);
    expect(resolveSftConfig({ batch_size: 3, learning_rate: [1e-4, 2e-4], assistant_turns: "last", metric_logging: { enabled: true } }, 5, { x: 1 })).toEqual({
      batch_size: 3,
      learning_rates: [1e-4, 2e-4],
      assistant_turns: "last",
      metric_logging: { enabled: true, target_training_step: null },
      experimental_config: { x: 1 },
    });
    expect(sftBatchPlan(resolveSftConfig({ learning_rate: 1e-4 }, 5))).toEqual({ batchSize: 2, learningRates: [1e-4, 1e-4, 1e-4] });
    expect(SftConfigSchema.safeParse({ batch_size: 0 }).success).toBe(false);
    expect(SftConfigSchema.safeParse({ learning_rate: [] }).success).toBe(false);
    expect(SftConfigSchema.safeParse({ learning_rate: 0 }).success).toBe(false);
    expect(SftConfigSchema.safeParse({ assistant_turns: "first" }).success).toBe(false);
  });

  it("needs one learning rate per batch", () => {
    expect(resolveSftConfig({ learning_rate: [3, 2, 1] }, 5).learning_rates).toEqual([3, 2, 1]);
    expect(() => resolveSftConfig({ learning_rate: [3, 2] }, 5)).toThrow(/^config\.learning_rate: learning_rate lists 2 rates but the data makes 3 batches \(5 rows, batch_size 2\)/);
  });

  const row = (length: number, trainable: number): SftRow => ({
    tokens: new Int32Array(length).fill(7),
    labels: Int32Array.from({ length }, (_, i) => (i >= length - trainable ? 7 : IGNORE)),
    numTrainableTokens: trainable,
  });

  it("drops rows over the model's length, skips batches left with nothing to train, and counts tokens", () => {
    const rows = [row(4, 2), row(9, 3), row(5, 0), row(12, 4), row(3, 1)];
    const { batches, numDroppedTrajectories, numSkippedBatches } = buildSftBatches(rows, { batchSize: 2, learningRates: [0.1, 0.2, 0.3] }, 10);
    expect(numDroppedTrajectories).toBe(1);
    expect(numSkippedBatches).toBe(1);
    expect(batches.map(({ index, learningRate, numTrajectories, numTokens, numTrainableTokens, numDroppedTrajectories: dropped }) => ({ index, learningRate, numTrajectories, numTokens, numTrainableTokens, dropped }))).toEqual([
      { index: 0, learningRate: 0.1, numTrajectories: 2, numTokens: 13, numTrainableTokens: 5, dropped: 0 },
      { index: 2, learningRate: 0.3, numTrajectories: 1, numTokens: 3, numTrainableTokens: 1, dropped: 0 },
    ]);
  });

  it("takes the token mean of the cross-entropy over the whole batch", () => {
    const inputs = sftLossInputs({ tokens: Int32Array.from([5, 6, 7, 8]), labels: Int32Array.from([IGNORE, IGNORE, 7, 8]), numTrainableTokens: 2 });
    expect([...inputs.targets]).toEqual([6, 7, 8, 0]);
    expect([...inputs.mask]).toEqual([0, 1, 1, 0]);
    const loss = sftBatchLoss([
      { mask: inputs.mask, logprobs: Float64Array.from([-9, -0.5, -1.5, -9]) },
      { mask: Uint8Array.from([1, 0]), logprobs: Float64Array.from([-2, -9]) },
    ]);
    // (0.5 + 1.5 + 2) / 3 trainable tokens.
    expect(loss.loss).toBeCloseTo(4 / 3, 12);
    expect([...loss.gradients[0]!]).toEqual([0, -1 / 3, -1 / 3, 0]);
    expect([...loss.gradients[1]!]).toEqual([-1 / 3, 0]);
    expect(loss.numTrainableTokens).toBe(3);
    expect(sftBatchLoss([{ mask: new Uint8Array(2), logprobs: new Float64Array(2) }]).loss).toBe(0);
    expect(() => sftBatchLoss([{ mask: new Uint8Array(2), logprobs: new Float64Array(3) }])).toThrow(RangeError);
  });
});
