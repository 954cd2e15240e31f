import { describe, expect, it } from "vitest";
import type { GenerateEvent, PromptPositionLogprobs } from "../../../engine/api.js";
import { ByteTokenizer } from "../../../testing/byte-tokenizer.js";
import { eventStream, sampledTokens } from "../../../testing/chat.js";
import { LogprobFormatter } from "../pipeline/logprobs.js";
import type { LegacyPlan } from "./prepare.js";
import { CompletionChunk, CompletionRes } from "./protocol.js";
import { collectLegacyCompletion, streamLegacyCompletion } from "./response.js";

const tokenizer = new ByteTokenizer();
const prompts = ["ab", "cd"].map((text) => ({ text, tokenIds: tokenizer.encode(text) }));

function plan(overrides: Partial<LegacyPlan> = {}): LegacyPlan {
  return {
    id: "cmpl-test",
    created: 1700000000,
    model: "test/base",
    systemFingerprint: "flywheel-test-00000000",
    n: 2,
    echo: false,
    prompts,
    logprobs: null,
    formatter: new LogprobFormatter(tokenizer, { asTokenIds: false, topCount: 1 }),
    returnTokenIds: false,
    promptLogprobs: false,
    streamUsage: { include: false, continuous: false },
    ...overrides,
  };
}

/** One prompt's generation: each of its two choices writes `text` and finishes (the second on a stop string). */
function generation(promptTokenIds: number[], text: string): GenerateEvent[] {
  const promptLogprobs: (PromptPositionLogprobs | null)[] = promptTokenIds.map((tokenId, index) => (index === 0 ? null : { actual: { tokenId, logprob: -1, rank: 1 }, top: [{ tokenId, logprob: -1, rank: 1 }] }));
  return [
    { type: "started", promptTokenIds, cachedTokens: 0, promptLogprobs },
    ...[0, 1].map((index): GenerateEvent => ({ type: "output", index, tokens: sampledTokens(tokenizer, text), text })),
    { type: "finished", index: 0, finishReason: "length", stopReason: null },
    { type: "finished", index: 1, finishReason: "stop", stopReason: "END" },
  ];
}

const generations = () => prompts.map((prompt) => eventStream(generation(prompt.tokenIds, "xy")));
const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value));

const plans: [string, LegacyPlan][] = [
  ["plain", plan()],
  ["echo, logprobs, prompt logprobs and token ids", plan({ echo: true, logprobs: 1, returnTokenIds: true, promptLogprobs: true })],
  ["with usage on every chunk and at the end", plan({ logprobs: 0, streamUsage: { include: true, continuous: true } })],
];

/**
 * The legacy completions' values are exactly what the protocol (the schemas /openapi.json shows)
 * describes: parsing drops fields a schema does not name, so equality also finds undocumented ones.
 */
describe("legacy completions' answers and their protocol", () => {
  it.each(plans)("the whole response: %s", async (_name, legacyPlan) => {
    const response = wire(await collectLegacyCompletion(generations(), legacyPlan));
    expect(CompletionRes.parse(response)).toEqual(response);
    expect(response.choices.map((choice) => choice.index)).toEqual([0, 1, 2, 3]);
  });

  it.each(plans)("every streamed chunk: %s", async (_name, legacyPlan) => {
    const chunks: CompletionChunk[] = [];
    await streamLegacyCompletion(generations(), legacyPlan, async (chunk) => {
      chunks.push(wire(chunk));
    });
    for (const chunk of chunks) expect(CompletionChunk.parse(chunk)).toEqual(chunk);
    expect(chunks.filter((chunk) => chunk.choices[0]?.finish_reason)).toHaveLength(4);
  });
});
