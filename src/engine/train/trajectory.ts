import { TrainingInputError, type Loc } from "./errors.js";
import { completionsExchange, messagesExchange, responsesExchange } from "./exchange-kinds.js";
import type { ChatCompletionsExchangeJson, ChatMessage, ChatTool, ChoiceJson, TokenLogprobJson } from "./trajectory-json.js";

export type { ChatCompletionsExchangeJson, ChatMessage, ChatTool, ChoiceJson } from "./trajectory-json.js";

/**
 * The trajectory data the preview training API receives (`docs/api/training.md#trajectories`), as parsed JSON,
 * and the helpers that read it: which items are Choices, which are trainable, the sampled token ids
 * and logprobs of a Choice, chat messages for the template, and tools normalisation.
 */

export type HistoryItem = ChatMessage | ChoiceJson;

export interface HistoryJson {
  messages_and_choices: HistoryItem[];
  tools?: ChatTool[] | null;
  /**
   * Set on a history made from one captured exchange: only its final Choice (the response) is
   * trained, the request's messages are its prompt; `prompt_token_ids` are the ids the engine
   * sampled from, when the response reported them.
   */
  exchange?: { prompt_token_ids: number[] | null };
}

/** ART's `TrajectoryExchanges`: captured calls by API. Only Chat Completions exchanges can train here. */
export interface TrajectoryExchangesJson {
  chat_completions?: ChatCompletionsExchangeJson[] | null;
  completions?: unknown[] | null;
  responses?: unknown[] | null;
  messages?: unknown[] | null;
}

/** Exchange kinds of the other APIs, trained as the Chat Completions exchange each amounts to (`exchange-kinds.ts`). */
export const OTHER_EXCHANGE_KINDS = ["completions", "responses", "messages"] as const;

export interface TrajectoryJson extends HistoryJson {
  /** ART's newer form: captured exchanges instead of messages_and_choices (never both). */
  exchanges?: TrajectoryExchangesJson | null;
  additional_histories?: HistoryJson[] | null;
  reward?: number;
  metrics?: Record<string, unknown> | null;
  metadata?: Record<string, unknown> | null;
  [key: string]: unknown;
}

export interface TrajectoryGroupJson {
  trajectories: TrajectoryJson[];
  exceptions?: unknown[] | null;
  [key: string]: unknown;
}

/**
 * The same data as a validated job stores it and the job runner reads it: every field ART may leave
 * out at its default is filled in (the preview API's schema, `server/training/trajectories/protocol.ts`,
 * produces exactly this shape and is checked against it at compile time).
 */
export interface History extends HistoryJson {
  tools: ChatTool[] | null;
}

export interface Trajectory extends TrajectoryJson {
  /** Empty lists when the trajectory uses messages_and_choices. */
  exchanges: TrajectoryExchangesJson;
  messages_and_choices: HistoryItem[];
  tools: ChatTool[] | null;
  additional_histories: History[];
  reward: number;
  metrics: Record<string, number | boolean>;
  metadata: Record<string, unknown>;
  logs: string[];
}

export interface TrajectoryGroup extends TrajectoryGroupJson {
  trajectories: Trajectory[];
  exceptions: unknown[];
  metadata: Record<string, unknown>;
  metrics: Record<string, number | boolean>;
  logs: string[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A Choice is an object with a `message` object and no top-level `role`
 * (docs/api/training.md#trajectory-json); anything else is a message.
 */
export function isChoice(item: unknown): item is ChoiceJson {
  return isObject(item) && isObject(item.message) && !("role" in item);
}

/** Only Choices with logprobs train, unless `allow_training_without_logprobs` also admits other assistant turns. */
export function isTrainableItem(item: unknown, allowTrainingWithoutLogprobs: boolean): boolean {
  if (isChoice(item)) return (item.logprobs !== null && item.logprobs !== undefined) || allowTrainingWithoutLogprobs;
  return allowTrainingWithoutLogprobs && isObject(item) && item.role === "assistant";
}

/**
 * Main history first, then each additional history, or, for a trajectory in the exchanges form,
 * one history per Chat Completions exchange (each a trained span); all share the trajectory's advantage.
 */
export function historiesOf(trajectory: TrajectoryJson, loc: Loc): { history: HistoryJson; loc: Loc }[] {
  if (!isObject(trajectory)) throw new TrainingInputError(loc, "a trajectory must be an object");
  if (hasExchanges(trajectory)) return exchangeHistories(trajectory, loc);
  // Only the history fields are taken, so no key of the input can pose as `exchange`.
  const histories = [{ history: { messages_and_choices: trajectory.messages_and_choices, tools: trajectory.tools }, loc }];
  const extra = trajectory.additional_histories ?? [];
  if (!Array.isArray(extra)) throw new TrainingInputError([...loc, "additional_histories"], "must be a list of histories");
  extra.forEach((history, index) => {
    const historyLoc = [...loc, "additional_histories", index];
    if (!isObject(history)) throw new TrainingInputError(historyLoc, "a history must be an object");
    histories.push({ history: { messages_and_choices: history.messages_and_choices, tools: history.tools }, loc: historyLoc });
  });
  return histories;
}

/** Whether the trajectory carries any exchange (of any kind). */
export function hasExchanges(trajectory: TrajectoryJson): boolean {
  const exchanges = trajectory.exchanges;
  if (!isObject(exchanges)) return false;
  return Object.values(exchanges).some((list) => Array.isArray(list) && list.length > 0);
}

function exchangeHistories(trajectory: TrajectoryJson, loc: Loc): { history: HistoryJson; loc: Loc }[] {
  const exchanges = trajectory.exchanges as TrajectoryExchangesJson;
  if ((Array.isArray(trajectory.messages_and_choices) && trajectory.messages_and_choices.length > 0) || (trajectory.additional_histories ?? []).length > 0) {
    throw new TrainingInputError(loc, "a trajectory cannot contain both exchanges and messages_and_choices (or additional_histories)");
  }
  const list = exchanges.chat_completions ?? [];
  if (!Array.isArray(list)) throw new TrainingInputError([...loc, "exchanges", "chat_completions"], "must be a list of exchanges");
  const all: { exchange: ChatCompletionsExchangeJson; loc: Loc }[] = list.map((exchange, index) => ({ exchange, loc: [...loc, "exchanges", "chat_completions", index] }));
  for (const kind of OTHER_EXCHANGE_KINDS) {
    const others = exchanges[kind] ?? [];
    if (!Array.isArray(others)) throw new TrainingInputError([...loc, "exchanges", kind], "must be a list of exchanges");
    others.forEach((exchange, index) => {
      const exchangeLoc = [...loc, "exchanges", kind, index];
      all.push({ exchange: CONVERTERS[kind](exchange, exchangeLoc), loc: exchangeLoc });
    });
  }
  return all.map(({ exchange, loc: exchangeLoc }) => {
    const messages = exchange?.request?.messages;
    if (!Array.isArray(messages)) throw new TrainingInputError([...exchangeLoc, "request", "messages"], "must be a list of messages");
    const choices = exchange.response?.choices;
    if (!Array.isArray(choices) || choices.length !== 1 || !isChoice(choices[0])) {
      throw new TrainingInputError([...exchangeLoc, "response", "choices"], "a trained exchange needs a response with exactly one choice");
    }
    const choice = choices[0];
    const prompt = choice.prompt_token_ids ?? exchange.response.prompt_token_ids;
    const history: HistoryJson = {
      messages_and_choices: [...messages, choice],
      tools: exchange.request.tools ?? null,
      exchange: { prompt_token_ids: isTokenIdList(prompt) ? prompt : null },
    };
    return { history, loc: exchangeLoc };
  });
}

const CONVERTERS = { completions: completionsExchange, responses: responsesExchange, messages: messagesExchange };

/** SFT rows come from chat_completions exchanges only (a conversation with its reply); the other kinds train by RL. */
export function nonChatSftExchangeMessage(kind: string): string {
  return `'${kind}' exchanges cannot be SFT data: send chat_completions exchanges (or messages) in train.jsonl or trajectories.jsonl`;
}

function isTokenIdList(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((id) => Number.isInteger(id) && id >= 0);
}

/**
 * Which items of a history train: any trainable item of a messages_and_choices history; only the
 * final Choice (the response) of an exchange history, whose request messages are its prompt.
 */
export function trainableFlags(history: HistoryJson, items: readonly HistoryItem[], allowTrainingWithoutLogprobs: boolean): boolean[] {
  if (history.exchange) return items.map((item, index) => index === items.length - 1 && isTrainableItem(item, allowTrainingWithoutLogprobs));
  return items.map((item) => isTrainableItem(item, allowTrainingWithoutLogprobs));
}

/**
 * The exact token ids of a Choice when the engine reported them: vLLM's `token_ids`, else
 * `token_id:<N>` strings in its logprobs; undefined when it did not.
 */
export function exactChoiceTokenIds(choice: ChoiceJson): number[] | undefined {
  if (isTokenIdList(choice.token_ids)) return [...choice.token_ids];
  const entries = choice.logprobs?.content ?? [];
  if (!Array.isArray(entries) || entries.length === 0) return undefined;
  const parsed = entries.map((entry) => TOKEN_ID_PATTERN.exec(isObject(entry) && typeof entry.token === "string" ? entry.token : "")?.[1]);
  return parsed.every((id) => id !== undefined) ? parsed.map(Number) : undefined;
}

/** The items of a history, checked to be a list of objects. */
export function historyItems(history: HistoryJson, loc: Loc): HistoryItem[] {
  const items = history.messages_and_choices;
  if (!Array.isArray(items)) throw new TrainingInputError([...loc, "messages_and_choices"], "must be a list of messages and choices");
  items.forEach((item, index) => {
    if (!isObject(item)) throw new TrainingInputError([...loc, "messages_and_choices", index], "must be a message or a choice object");
    if (!isChoice(item) && typeof item.role !== "string") {
      throw new TrainingInputError([...loc, "messages_and_choices", index], "a message needs a string 'role' (a choice needs a 'message' object)");
    }
  });
  return items;
}

/**
 * OpenAI-format tools; a bare function object is wrapped as `{type: "function", function}`
 * (docs/api/training.md#trajectory-json).
 */
export function normalizeTools(tools: unknown, loc: Loc): ChatTool[] | undefined {
  if (tools === null || tools === undefined) return undefined;
  if (!Array.isArray(tools)) throw new TrainingInputError(loc, "tools must be a list");
  return tools.map((tool, index) => {
    if (!isObject(tool)) throw new TrainingInputError([...loc, index], "a tool must be an object");
    return "type" in tool ? tool : { type: "function", function: tool };
  });
}

/**
 * Chat messages for the template: a Choice becomes an assistant message (content, and tool_calls
 * when it has any); a message is copied with a null content replaced by "".
 */
export function toChatMessage(item: HistoryItem): ChatMessage {
  if (isChoice(item)) {
    const toolCalls = item.message.tool_calls ?? [];
    return {
      role: "assistant",
      content: item.message.content ?? "",
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls.map((call) => ({ id: call.id, type: call.type ?? "function", function: { ...call.function } })) } : {}),
    };
  }
  const message = item as ChatMessage;
  return message.content === null ? { ...message, content: "" } : { ...message };
}

/** For templates that iterate `tool_call.arguments|items`: JSON-decode argument strings into objects. */
export function decodeToolCallArguments(message: ChatMessage, loc: Loc): ChatMessage {
  if (!message.tool_calls || message.tool_calls.length === 0) return message;
  return {
    ...message,
    tool_calls: message.tool_calls.map((call, index) => {
      const args = call.function.arguments;
      if (typeof args !== "string") return call;
      let decoded: unknown;
      try {
        decoded = JSON.parse(args);
      } catch {
        throw new TrainingInputError([...loc, "tool_calls", index, "function", "arguments"], "tool call arguments must be a JSON object string");
      }
      if (!isObject(decoded)) throw new TrainingInputError([...loc, "tool_calls", index, "function", "arguments"], "tool call arguments must be a JSON object string");
      return { ...call, function: { ...call.function, arguments: decoded } };
    }),
  };
}

/** The part of a tokenizer the sampled-token fallback needs. */
export interface TokenLookup {
  tokenId(token: string): number | undefined;
  readonly eosTokenId: number | undefined;
}

export interface SampledTokens {
  tokenIds: number[];
  logprobs: number[];
  /** The first token's text from its `bytes` (undefined without bytes or tokens). */
  firstTokenText: string | undefined;
}

const TOKEN_ID_PATTERN = /^token_id:(\d+)$/;

/**
 * The sampled token ids and logprobs of a Choice (docs/api/training.md#rl-tokenization step 5), from
 * `logprobs.content` (or `refusal`). Ids come from vLLM's `token_ids` when it matches the logprobs
 * one-to-one, else from `token_id:<N>` strings, else from looking the token strings up (unknown → EOS).
 */
export function choiceSampledTokens(choice: ChoiceJson, lookup: TokenLookup, loc: Loc): SampledTokens {
  const content = choice.logprobs?.content;
  const entries = (content && content.length > 0 ? content : choice.logprobs?.refusal) ?? [];
  if (!Array.isArray(entries)) throw new TrainingInputError([...loc, "logprobs", "content"], "must be a list of token logprobs");
  const logprobs = entries.map((entry, index) => {
    if (!isObject(entry) || typeof entry.logprob !== "number") {
      throw new TrainingInputError([...loc, "logprobs", "content", index, "logprob"], "every token logprob entry needs a numeric 'logprob'");
    }
    return entry.logprob;
  });
  return { tokenIds: sampledIds(choice, entries, lookup, loc), logprobs, firstTokenText: firstText(entries[0]) };
}

function sampledIds(choice: ChoiceJson, entries: TokenLogprobJson[], lookup: TokenLookup, loc: Loc): number[] {
  const direct = choice.token_ids;
  if (Array.isArray(direct) && direct.length === entries.length && direct.every((id) => Number.isInteger(id) && id >= 0)) return [...direct];
  const parsed = entries.map((entry) => TOKEN_ID_PATTERN.exec(typeof entry.token === "string" ? entry.token : "")?.[1]);
  if (parsed.every((id) => id !== undefined)) return parsed.map(Number);
  return entries.map((entry, index) => {
    const id = typeof entry.token === "string" ? lookup.tokenId(entry.token) : undefined;
    if (id !== undefined) return id;
    if (lookup.eosTokenId === undefined) throw new TrainingInputError([...loc, "logprobs", "content", index, "token"], "unknown token and the tokenizer has no EOS token to stand in");
    return lookup.eosTokenId;
  });
}

function firstText(entry: TokenLogprobJson | undefined): string | undefined {
  if (!entry || !Array.isArray(entry.bytes)) return undefined;
  return new TextDecoder().decode(Uint8Array.from(entry.bytes));
}
