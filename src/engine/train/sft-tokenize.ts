import { chatTemplateConventions, type ChatTemplateDeps } from "./chat-render.js";
import { TrainingInputError, type Loc } from "./errors.js";
import { decodeToolCallArguments, normalizeTools, toChatMessage, type ChatMessage, type ChatTool } from "./trajectory.js";

/**
 * SFT examples and their labels (`docs/api/training.md#sft`). An example is one line of `train.jsonl`:
 * `{"messages": [...], "tools"?: [...]}`. Labels are the token id where the token is trained and
 * IGNORE (-100) elsewhere; the first token is never trained (nothing predicts it).
 */
export const IGNORE = -100;

export interface SftExample {
  messages: ChatMessage[];
  tools?: ChatTool[];
}

export interface SftRow {
  tokens: Int32Array;
  labels: Int32Array;
  numTrainableTokens: number;
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool", "function"]);

/** Validates one parsed line; `loc` is where it came from (e.g. `["train.jsonl", 12]`). */
export function sftExampleFromJson(value: unknown, loc: Loc): SftExample {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TrainingInputError(loc, "an SFT example must be an object with 'messages'");
  const { messages, tools } = value as { messages?: unknown; tools?: unknown };
  if (!Array.isArray(messages) || messages.length === 0) throw new TrainingInputError([...loc, "messages"], "must be a non-empty list of messages");
  messages.forEach((message, index) => {
    const role = (message as { role?: unknown } | null)?.role;
    if (typeof message !== "object" || message === null || typeof role !== "string" || !ROLES.has(role)) {
      throw new TrainingInputError([...loc, "messages", index], "each message needs a role among system, developer, user, assistant, tool");
    }
  });
  if ((messages[messages.length - 1] as ChatMessage).role !== "assistant") throw new TrainingInputError([...loc, "messages"], "the last message must be an assistant message");
  const normalized = normalizeTools(tools, [...loc, "tools"]);
  return { messages: messages.map((message) => toChatMessage(message as ChatMessage)), ...(normalized ? { tools: normalized } : {}) };
}

/** The text that opens an instruction (user) turn and a response (assistant) turn in a template family. */
export interface ResponseMarkers {
  instruction: string;
  response: string;
}

/** Marker pairs by template family, detected from the template source. */
export function detectResponseMarkers(chatTemplate: string): ResponseMarkers {
  if (chatTemplate.includes("<|im_start|>")) return { instruction: "<|im_start|>user\n", response: "<|im_start|>assistant\n" };
  if (chatTemplate.includes("<|start_header_id|>")) {
    return { instruction: "<|start_header_id|>user<|end_header_id|>\n\n", response: "<|start_header_id|>assistant<|end_header_id|>\n\n" };
  }
  if (chatTemplate.includes("<start_of_turn>")) return { instruction: "<start_of_turn>user\n", response: "<start_of_turn>model\n" };
  if (chatTemplate.includes("[INST]")) return { instruction: "[INST]", response: "[/INST]" };
  throw new TrainingInputError([], "the chat template's assistant turn markers are not recognised, so assistant_turns='all' cannot find the responses; use assistant_turns='last'");
}

/**
 * assistant_turns "all": every span from the end of a response marker to the next instruction
 * marker (or the end) is trained — each assistant reply with its end-of-turn token.
 */
export function responseOnlyLabels(tokens: readonly number[], instructionIds: readonly number[], responseIds: readonly number[]): Int32Array {
  const labels = new Int32Array(tokens.length).fill(IGNORE);
  let index = 0;
  while (index < tokens.length) {
    const responseStart = findSubsequence(tokens, responseIds, index);
    if (responseStart < 0) break;
    const trainFrom = responseStart + responseIds.length;
    const nextInstruction = findSubsequence(tokens, instructionIds, trainFrom);
    const trainTo = nextInstruction < 0 ? tokens.length : nextInstruction;
    for (let t = trainFrom; t < trainTo; t++) labels[t] = tokens[t]!;
    index = Math.max(trainTo, trainFrom);
  }
  if (labels.length > 0) labels[0] = IGNORE;
  return labels;
}

function findSubsequence(values: readonly number[], pattern: readonly number[], from: number): number {
  if (pattern.length === 0) return -1;
  outer: for (let i = from; i + pattern.length <= values.length; i++) {
    for (let j = 0; j < pattern.length; j++) if (values[i + j] !== pattern[j]) continue outer;
    return i;
  }
  return -1;
}

export function tokenizeSftExample(example: SftExample, deps: ChatTemplateDeps, assistantTurns: "all" | "last", loc: Loc = []): SftRow {
  const { templateKwargs, decodeToolArguments } = chatTemplateConventions(deps.chatTemplate, deps.templateKwargs);
  const messages = decodeToolArguments ? example.messages.map((message, index) => decodeToolCallArguments(message, [...loc, "messages", index])) : example.messages;
  const encode = (text: string) => deps.tokenizer.encode(text, { addSpecialTokens: false });
  let tokens: number[];
  let labels: Int32Array;
  if (assistantTurns === "last") {
    if (messages[messages.length - 1]?.role !== "assistant") throw new TrainingInputError([...loc, "messages"], "assistant_turns='last' needs the last message to be an assistant message");
    const promptText = deps.render(messages.slice(0, -1), example.tools, { addGenerationPrompt: true, continueFinalMessage: false, templateKwargs });
    const fullText = deps.render(messages, example.tools, { addGenerationPrompt: false, continueFinalMessage: false, templateKwargs });
    if (!fullText.startsWith(promptText)) {
      throw new TrainingInputError([...loc, "messages"], "cannot isolate the final assistant response: the chat template's rendering of the whole conversation does not start with its generation prompt");
    }
    const promptIds = encode(promptText);
    const targetIds = encode(fullText.slice(promptText.length));
    tokens = [...promptIds, ...targetIds];
    labels = Int32Array.from([...promptIds.map(() => IGNORE), ...targetIds]);
    if (labels.length > 0) labels[0] = IGNORE;
  } else {
    const markers = detectResponseMarkers(deps.chatTemplate);
    tokens = encode(deps.render(messages, example.tools, { addGenerationPrompt: false, continueFinalMessage: false, templateKwargs }));
    labels = responseOnlyLabels(tokens, encode(markers.instruction), encode(markers.response));
  }
  return { tokens: Int32Array.from(tokens), labels, numTrainableTokens: labels.reduce((count, label) => count + (label === IGNORE ? 0 : 1), 0) };
}
