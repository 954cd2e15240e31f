import { renderChatTemplate } from "../engine/chat-template.js";
import type { LinearAdapter } from "../engine/model/types.js";
import type { LoadedModel } from "../engine/model/load.js";
import { defaultSamplingParams } from "../engine/sampling/params.js";
import { Rng } from "../engine/sampling/rng.js";
import { Sampler } from "../engine/sampling/sampler.js";
import { SequenceState } from "../engine/sampling/sequence.js";
import type { ChoiceJson } from "../engine/train/trajectory.js";

/** Completions sampled from a real model the way the engine samples them, shaped as ART records them. */

export interface Completion {
  tokens: number[];
  /** The raw logprob of each drawn token (what the chat endpoint reports). */
  logprobs: number[];
}

/** The prompt ids of a conversation with the model's template and a generation prompt. */
export function promptIds(model: LoadedModel, messages: Record<string, unknown>[]): number[] {
  const text = renderChatTemplate(model.chatTemplates.default!, { messages, addGenerationPrompt: true, specialTokens: model.templateSpecialTokens });
  return model.tokenizer.encode(text, { addSpecialTokens: false });
}

/** Samples one completion at temperature 1 (seeded) with an optional adapter, until EOS or `maxTokens`. */
export function sampleCompletion(model: LoadedModel, prompt: number[], options: { seed: number; maxTokens: number; adapter?: LinearAdapter | null }): Completion {
  const { transformer } = model;
  const adapter = options.adapter ?? undefined;
  const sequence = new SequenceState({
    params: defaultSamplingParams({ temperature: 1, logprobs: 0, seed: options.seed, maxTokens: options.maxTokens }),
    promptTokenIds: prompt,
    eosTokenId: model.tokenizer.eosTokenId,
  });
  const sampler = new Sampler(Rng.fromSeed(0));
  const cache = transformer.createCache();
  let [logits] = transformer.forward([{ cache, tokens: prompt, adapter }]);
  const tokens: number[] = [];
  const logprobs: number[] = [];
  for (;;) {
    const drawn = sampler.sample(sequence, logits!);
    tokens.push(drawn.tokenId);
    logprobs.push(drawn.logprob);
    if (sequence.append(drawn.tokenId)) break;
    [logits] = transformer.forward([{ cache, tokens: [drawn.tokenId], adapter }]);
  }
  return { tokens, logprobs };
}

/** The completion as ART dumps an OpenAI Choice from Flywheel's chat endpoint: `token_id:<id>` logprobs. */
export function artChoice(model: LoadedModel, completion: Completion): ChoiceJson {
  const { tokenizer } = model;
  return {
    finish_reason: completion.tokens.at(-1) === tokenizer.eosTokenId ? "stop" : "length",
    index: 0,
    message: { role: "assistant", content: tokenizer.decode(completion.tokens, { skipSpecialTokens: true }), tool_calls: null },
    logprobs: {
      content: completion.tokens.map((id, i) => ({ token: `token_id:${id}`, logprob: completion.logprobs[i]!, bytes: [...tokenizer.tokenBytes(id)], top_logprobs: [] })),
      refusal: null,
    },
  };
}
