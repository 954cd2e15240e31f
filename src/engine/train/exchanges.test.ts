import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { chatmlTemplate } from "../../testing/chatml.js";
import type { ChatTemplateDeps } from "./chat-render.js";
import { TrainingInputError } from "./errors.js";
import { tokenizeTrajectoryGroups } from "./tokenize-groups.js";
import { tokenizeHistory } from "./tokenize-history.js";
import { type ChatCompletionsExchangeJson, type ChoiceJson, historiesOf, type TrajectoryJson } from "./trajectory.js";

/** ART's `exchanges.chat_completions` trajectories: one trained span per captured call. */
const tokenizer = new ByteTokenizer();
const template = chatmlTemplate();
const deps: ChatTemplateDeps = { tokenizer, render: template.render, chatTemplate: template.source };
const imEnd = tokenizer.tokenId("<|im_end|>")!;
const enc = (text: string) => tokenizer.encode(text);
const bytesOf = (text: string) => [...new TextEncoder().encode(text)];

function sampled(content: string, ids: number[], extra: Partial<ChoiceJson> = {}): ChoiceJson {
  return {
    index: 0,
    finish_reason: "stop",
    message: { role: "assistant", content },
    logprobs: { content: ids.map((id, i) => ({ token: `token_id:${id}`, logprob: -0.1 * (i + 1) })) },
    ...extra,
  };
}

function exchange(messages: ChatCompletionsExchangeJson["request"]["messages"], choice: ChoiceJson, response: Record<string, unknown> = {}): ChatCompletionsExchangeJson {
  return {
    request: { model: "m", messages },
    response: { id: "chatcmpl-1", object: "chat.completion", created: 0, model: "m", choices: [choice], ...response },
    start_time: "2026-01-01T00:00:00Z",
    end_time: "2026-01-01T00:00:01Z",
    model: "m",
  };
}

describe("chat_completions exchanges", () => {
  it("render the request's messages and train the response's sampled tokens", () => {
    const reply = [...bytesOf("hi"), imEnd];
    const trajectory: TrajectoryJson = { messages_and_choices: [], exchanges: { chat_completions: [exchange([{ role: "user", content: "Q" }], sampled("hi", reply))] } };
    const [{ history, loc }] = historiesOf(trajectory, ["t"]) as [ReturnType<typeof historiesOf>[number]];
    expect(loc).toEqual(["t", "exchanges", "chat_completions", 0]);
    const result = tokenizeHistory(history, deps, false, loc)!;
    const prompt = enc("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n");
    expect(result.tokenIds).toEqual([...prompt, ...reply]);
    expect(result.assistantMask).toEqual([...prompt.map(() => 0), ...reply.map(() => 1)]);
  });

  it("use the response's own prompt_token_ids and token_ids when present, with no re-rendering", () => {
    // Ids no template would produce for this conversation: the exact ids must be what trains.
    const promptIds = [5, 6, 7, 8];
    const tokenIds = [9, 10, imEnd];
    const choice = { ...sampled("whatever", tokenIds), token_ids: tokenIds };
    const trajectory: TrajectoryJson = { messages_and_choices: [], exchanges: { chat_completions: [exchange([{ role: "user", content: "Q" }], choice, { prompt_token_ids: promptIds })] } };
    const [{ history, loc }] = historiesOf(trajectory, []) as [ReturnType<typeof historiesOf>[number]];
    const result = tokenizeHistory(history, deps, false, loc)!;
    expect(result.tokenIds).toEqual([...promptIds, ...tokenIds]);
    expect(result.assistantMask).toEqual([0, 0, 0, 0, 1, 1, 1]);
    expect(result.logprobs.slice(4)).toEqual([-0.1, -0.2, -0.30000000000000004]);
    expect(result.logprobs.slice(0, 4).every(Number.isNaN)).toBe(true);
    // A choice-level prompt_token_ids (vLLM's newer place) is used as well.
    const choiceLevel = historiesOf({ messages_and_choices: [], exchanges: { chat_completions: [exchange([{ role: "user", content: "Q" }], { ...choice, prompt_token_ids: [1, 2] })] } }, [])[0]!;
    expect(tokenizeHistory(choiceLevel.history, deps, false, [])!.tokenIds).toEqual([1, 2, ...tokenIds]);
  });

  it("train only the response: earlier assistant turns in the request are prompt, even when training without logprobs", () => {
    const messages = [
      { role: "user", content: "Q" },
      { role: "assistant", content: "earlier" },
      { role: "user", content: "Q2" },
    ];
    const choice: ChoiceJson = { index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" };
    const { history } = historiesOf({ messages_and_choices: [], exchanges: { chat_completions: [exchange(messages, choice)] } }, [])[0]!;
    const result = tokenizeHistory(history, deps, true, [])!;
    const trained = result.tokenIds.filter((_, i) => result.assistantMask[i] === 1);
    expect(tokenizer.decode(trained)).toBe("ok");
    expect(tokenizeHistory(history, deps, false, [])).toBeNull();
  });

  it("become one trained sequence per exchange, sharing the trajectory's advantage and token weight", () => {
    const first = [...bytesOf("a"), imEnd];
    const second = [...bytesOf("bc"), imEnd];
    const agent: TrajectoryJson = {
      reward: 1,
      messages_and_choices: [],
      exchanges: {
        chat_completions: [
          exchange([{ role: "user", content: "Q" }], sampled("a", first)),
          exchange(
            [
              { role: "user", content: "Q" },
              { role: "assistant", content: "a" },
              { role: "user", content: "more" },
            ],
            sampled("bc", second),
          ),
        ],
      },
    };
    const loser: TrajectoryJson = { reward: 0, exchanges: { chat_completions: [exchange([{ role: "user", content: "Q" }], sampled("z", [...bytesOf("z"), imEnd]))] }, messages_and_choices: [] };
    const { results } = tokenizeTrajectoryGroups([{ trajectories: [agent, loser] }], deps, { scaleRewards: false, allowTrainingWithoutLogprobs: false, random: () => 0.5 });
    const own = results.filter((result) => result.trajectoryIndex === 0);
    expect(own).toHaveLength(2);
    expect(own.map((result) => result.weight)).toEqual([1 / (5 + 1e-6), 1 / (5 + 1e-6)]);
    expect(own.every((result) => result.advantage === 0.5)).toBe(true);
    const trainedTexts = own.map((result) => result.tokenIds.filter((_, i) => result.assistantMask[i] === 1)).map((ids) => ids.length);
    expect(trainedTexts.sort()).toEqual([2, 3]);
  });

  it("refuse both forms in one trajectory and malformed exchanges of every kind, naming where", () => {
    const both: TrajectoryJson = { messages_and_choices: [{ role: "user", content: "Q" }], exchanges: { chat_completions: [exchange([{ role: "user", content: "Q" }], sampled("a", [1]))] } };
    expect(() => historiesOf(both, ["g", 0])).toThrow(TrainingInputError);
    expect(() => historiesOf(both, ["g", 0])).toThrow(/^g\.0: a trajectory cannot contain both/);
    const responses: TrajectoryJson = { messages_and_choices: [], exchanges: { responses: [{}] } };
    expect(() => historiesOf(responses, ["t"])).toThrow(/^t\.exchanges\.responses\.0: an exchange needs a request and a response object/);
    const twoChoices: TrajectoryJson = {
      messages_and_choices: [],
      exchanges: { chat_completions: [{ ...exchange([{ role: "user", content: "Q" }], sampled("a", [1])), response: { choices: [sampled("a", [1]), sampled("b", [2])] } }] },
    };
    expect(() => historiesOf(twoChoices, [])).toThrow(/exchanges\.chat_completions\.0\.response\.choices: .*exactly one choice/);
  });

  it("are the only source of exact prompt ids: an `exchange` key sent on a messages_and_choices trajectory is ignored", () => {
    const reply = [...bytesOf("hi"), imEnd];
    const posing = { messages_and_choices: [{ role: "user", content: "Q" }, sampled("hi", reply)], exchange: { prompt_token_ids: [1, 2, 3] } } as TrajectoryJson;
    const [{ history }] = historiesOf(posing, []) as [ReturnType<typeof historiesOf>[number]];
    expect(history.exchange).toBeUndefined();
    expect(tokenizeHistory(history, deps, false, [])!.tokenIds).toEqual([...enc("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n"), ...reply]);
  });

  it("keep exact token ids past the tokenizer's vocabulary: the plan checks every result against the model's", () => {
    const choice = { ...sampled("x", [1]), token_ids: [tokenizer.vocabSize] };
    const { history, loc } = historiesOf({ messages_and_choices: [], exchanges: { chat_completions: [exchange([{ role: "user", content: "Q" }], choice, { prompt_token_ids: [1] })] } }, [])[0]!;
    expect(tokenizeHistory(history, deps, false, loc)!.tokenIds).toEqual([1, tokenizer.vocabSize]);
  });
});
