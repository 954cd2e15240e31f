import { chatTemplateConventions, renderIds, type ChatTemplateDeps, type TrainTokenizer } from "./chat-render.js";
import { TrainingInputError, type Loc } from "./errors.js";
import { choiceSampledTokens, decodeToolCallArguments, exactChoiceTokenIds, historyItems, isChoice, trainableFlags, normalizeTools, toChatMessage, type ChatMessage, type HistoryItem, type HistoryJson } from "./trajectory.js";

/**
 * Tokenization of one history for RL (`docs/api/training.md#rl-tokenization`): the conversation is rendered with the
 * chat template, every trainable assistant turn replaced by a sentinel token, and the sentinel is
 * then replaced by the exact tokens the sampler produced (so the trainer scores what was sampled,
 * not a re-tokenization of its text).
 */
export interface TokenizedHistory {
  tokenIds: number[];
  /** The sampler's logprob of each token; NaN where there is none. */
  logprobs: number[];
  /** 1 on trainable (sampled) tokens. */
  assistantMask: number[];
  /** Where each trainable turn's tokens are: its index in `messages_and_choices`, first token, count. */
  turns: TurnSpan[];
}

export interface TurnSpan {
  itemIndex: number;
  start: number;
  count: number;
}

/** How many tokens a Qwen3-style template emits for its empty `<think>\n\n</think>\n\n` block. */
const EMPTY_THINK_BLOCK_TOKENS = 4;

export function tokenizeHistory(history: HistoryJson, deps: ChatTemplateDeps, allowTrainingWithoutLogprobs: boolean, loc: Loc): TokenizedHistory | null {
  const allItems = historyItems(history, loc);
  const allTrainable = trainableFlags(history, allItems, allowTrainingWithoutLogprobs);
  const last = allTrainable.lastIndexOf(true);
  if (last < 0) return null;
  const exact = exactExchangeTokens(history, allItems[last]!, last);
  if (exact) return exact;
  const items = allItems.slice(0, last + 1);
  const trainable = allTrainable.slice(0, last + 1);
  const tools = normalizeTools(history.tools, [...loc, "tools"]);
  const messages = chatMessages(items, deps.chatTemplate, loc);

  // The plain rendering only tells which ids the conversation uses. It is rendered whole: cutting
  // after the final message would fail for an empty reply (a completion of only the end token).
  const original = renderIds(deps, messages, tools, { addGenerationPrompt: false, continueFinalMessage: false });
  const sentinel = pickSentinel(deps.tokenizer, original, loc);
  const sentinelText = deps.tokenizer.decode([sentinel]);
  const templated = messages.map((message, index) => {
    if (!trainable[index]) return message;
    return { role: "assistant", content: sentinelText, ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}) };
  });
  const tokenIds = renderIds(deps, templated, tools, { addGenerationPrompt: false, continueFinalMessage: true });
  const logprobs: number[] = new Array(tokenIds.length).fill(NaN);
  const mask: number[] = new Array(tokenIds.length).fill(0);
  const turns: TurnSpan[] = [];

  let cursor = 0;
  items.forEach((item, index) => {
    if (!trainable[index]) return;
    const itemLoc = [...loc, "messages_and_choices", index];
    const sentinelAt = tokenIds.indexOf(sentinel, cursor);
    if (sentinelAt < 0) throw new TrainingInputError(itemLoc, "the chat template did not reproduce this assistant turn, so its tokens cannot be placed");
    const end = sentinelAt + 1;
    const endTokenId = tokenIds[end];
    const turn = turnTokens(item, deps.tokenizer, itemLoc);
    let start = sentinelAt;
    if (turn.firstTokenText === "<think>" && start >= EMPTY_THINK_BLOCK_TOKENS && deps.tokenizer.decode([tokenIds[start - EMPTY_THINK_BLOCK_TOKENS]!]) === "<think>") {
      // The sampler produced its own think block; drop the template's empty one.
      start -= EMPTY_THINK_BLOCK_TOKENS;
    }
    const count = turn.tokenIds.length;
    tokenIds.splice(start, end - start, ...turn.tokenIds);
    logprobs.splice(start, end - start, ...turn.logprobs);
    mask.splice(start, end - start, ...new Array<number>(count).fill(1));
    if (turn.sampled && count > 0 && turn.tokenIds[count - 1] === endTokenId) {
      // The sampled turn already ends with the token the template places after it (e.g. <|im_end|>).
      tokenIds.splice(start + count, 1);
      logprobs.splice(start + count, 1);
      mask.splice(start + count, 1);
    }
    turns.push({ itemIndex: index, start, count });
    cursor = start + count;
  });
  return { tokenIds, logprobs, assistantMask: mask, turns };
}

/**
 * An exchange whose response reported the prompt's and the choice's token ids trains on exactly
 * those ids (no re-rendering, so nothing a template or tokenizer does differently can shift them);
 * null when it did not report both. The ids are checked against the model's vocabulary with every
 * other result's (`planRlJob`): the model's, not the tokenizer's, which can be smaller (the
 * sampler draws from every row of the LM head, as vLLM does).
 */
function exactExchangeTokens(history: HistoryJson, final: HistoryItem, finalIndex: number): TokenizedHistory | null {
  const promptIds = history.exchange?.prompt_token_ids;
  if (!promptIds || !isChoice(final)) return null;
  const sampledIds = exactChoiceTokenIds(final);
  if (!sampledIds) return null;
  const entries = final.logprobs?.content ?? [];
  const sampledLogprobs =
    Array.isArray(entries) && entries.length === sampledIds.length && entries.every((entry) => typeof entry?.logprob === "number") ? entries.map((entry) => entry.logprob) : new Array<number>(sampledIds.length).fill(NaN);
  return {
    tokenIds: [...promptIds, ...sampledIds],
    logprobs: [...new Array<number>(promptIds.length).fill(NaN), ...sampledLogprobs],
    assistantMask: [...new Array<number>(promptIds.length).fill(0), ...new Array<number>(sampledIds.length).fill(1)],
    turns: [{ itemIndex: finalIndex, start: promptIds.length, count: sampledIds.length }],
  };
}

function chatMessages(items: HistoryItem[], chatTemplate: string, loc: Loc): ChatMessage[] {
  const { decodeToolArguments } = chatTemplateConventions(chatTemplate);
  return items.map((item, index) => {
    let message = toChatMessage(item);
    if (index === items.length - 1 && isChoice(item) && message.tool_calls) {
      // The final turn's tokens are replaced by the sampled ones anyway; render it as text only.
      message = { role: "assistant", content: message.content };
    }
    return decodeToolArguments ? decodeToolCallArguments(message, [...loc, "messages_and_choices", index, "message"]) : message;
  });
}

interface TurnTokens {
  tokenIds: number[];
  logprobs: number[];
  firstTokenText: string | undefined;
  /** The tokens are the sampler's own (a Choice with logprobs). */
  sampled: boolean;
}

function turnTokens(item: HistoryItem, tokenizer: TrainTokenizer, loc: Loc): TurnTokens {
  if (isChoice(item) && item.logprobs) {
    const sampled = choiceSampledTokens(item, tokenizer, loc);
    const firstTokenText = sampled.firstTokenText ?? (sampled.tokenIds.length > 0 ? tokenizer.decode([sampled.tokenIds[0]!]) : undefined);
    return { tokenIds: sampled.tokenIds, logprobs: sampled.logprobs, firstTokenText, sampled: true };
  }
  // Only with allow_training_without_logprobs: the turn's text, re-tokenized, with no sampler logprobs.
  const message = isChoice(item) ? item.message : item;
  if (message.tool_calls && message.tool_calls.length > 0) {
    throw new TrainingInputError(loc, "an assistant turn with tool_calls can only be trained from a Choice with logprobs (its sampled tokens)");
  }
  const content = message.content ?? "";
  if (typeof content !== "string") throw new TrainingInputError([...loc, "content"], "a trainable assistant message needs string content");
  const tokenIds = tokenizer.encode(content, { addSpecialTokens: false });
  return { tokenIds, logprobs: new Array<number>(tokenIds.length).fill(NaN), firstTokenText: undefined, sampled: false };
}

/**
 * The sentinel: the largest token id that the plain rendering does not contain and whose text
 * encodes back to exactly itself (so it survives re-rendering as one token).
 */
export function pickSentinel(tokenizer: TrainTokenizer, renderedIds: readonly number[], loc: Loc): number {
  const present = new Set(renderedIds);
  for (let id = tokenizer.vocabSize - 1; id >= 0; id--) {
    if (present.has(id) || tokenizer.isSpecial(id)) continue;
    const roundTrip = tokenizer.encode(tokenizer.decode([id]), { addSpecialTokens: false });
    if (roundTrip.length === 1 && roundTrip[0] === id) return id;
  }
  throw new TrainingInputError(loc, "no token is free to stand in for the assistant turns while rendering");
}
