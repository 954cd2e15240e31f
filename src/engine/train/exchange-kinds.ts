import { TrainingInputError, type Loc } from "./errors.js";
import type { ChatCompletionsExchangeJson, ChatMessage, ChatTool, ChoiceJson, TokenLogprobJson } from "./trajectory-json.js";

/**
 * ART's captures of the other inference APIs — legacy `completions`, `responses` and Anthropic
 * `messages` — rewritten as the Chat Completions exchange each one amounts to, so they train
 * through the same path: the request becomes the prompt's messages (and tools), the response one
 * Choice. Token exactness comes from what the response reported: a completions response's
 * `prompt_token_ids` and `token_ids` (or `token_id:<N>` logprob tokens); the `prompt_token_ids`,
 * `token_ids` and `logprobs` that Flywheel adds to Responses and Messages results (asked for with
 * `return_token_ids`, the default for trained-model names). Without them a Responses or Messages
 * exchange trains only with `allow_training_without_logprobs` (its text re-tokenized).
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const isIdList = (value: unknown): value is number[] => Array.isArray(value) && value.every((id) => Number.isInteger(id) && id >= 0);

/** A Choice from reported ids and per-token logprobs (token strings `token_id:<N>`, so the ids are exact). */
function exactChoice(message: ChoiceJson["message"], tokenIds: unknown, logprobs: unknown, finishReason: unknown): ChoiceJson {
  const choice: ChoiceJson = { index: 0, message, finish_reason: typeof finishReason === "string" ? finishReason : null, logprobs: null };
  if (isIdList(tokenIds)) {
    choice.token_ids = tokenIds;
    if (Array.isArray(logprobs) && logprobs.length === tokenIds.length && logprobs.every((value) => typeof value === "number")) {
      choice.logprobs = { content: tokenIds.map((id, index): TokenLogprobJson => ({ token: `token_id:${id}`, logprob: logprobs[index] as number, bytes: null, top_logprobs: [] })) };
    }
  }
  return choice;
}

/** A legacy completions exchange: the prompt must come as token ids (sent, or reported back), the choice with its sampled ids. */
export function completionsExchange(exchange: unknown, loc: Loc): ChatCompletionsExchangeJson {
  const request = isObject(exchange) && isObject(exchange.request) ? exchange.request : undefined;
  const response = isObject(exchange) && isObject(exchange.response) ? exchange.response : undefined;
  if (!request || !response) throw new TrainingInputError(loc, "an exchange needs a request and a response object");
  if (request.echo === true) throw new TrainingInputError([...loc, "request", "echo"], "a completions exchange with echo cannot be trained: its text holds the prompt; capture it without echo");
  const choices = response.choices;
  if (!Array.isArray(choices) || choices.length !== 1 || !isObject(choices[0])) throw new TrainingInputError([...loc, "response", "choices"], "a trained exchange needs a response with exactly one choice");
  const choice = choices[0];
  const promptIds = isIdList(choice.prompt_token_ids) ? choice.prompt_token_ids : isIdList(request.prompt) ? request.prompt : undefined;
  if (!promptIds) {
    throw new TrainingInputError([...loc, "response", "choices", 0, "prompt_token_ids"], "a completions exchange trains on exact token ids: send the prompt as token ids, or ask for return_token_ids: true");
  }
  const legacy = isObject(choice.logprobs) ? choice.logprobs : undefined;
  const tokens = Array.isArray(legacy?.tokens) ? (legacy.tokens as unknown[]) : [];
  const fromTokens = tokens.map((token) => (typeof token === "string" ? /^token_id:(\d+)$/.exec(token)?.[1] : undefined));
  const sampledIds = isIdList(choice.token_ids) ? choice.token_ids : fromTokens.length > 0 && fromTokens.every((id) => id !== undefined) ? fromTokens.map(Number) : undefined;
  if (!sampledIds) {
    throw new TrainingInputError([...loc, "response", "choices", 0, "token_ids"], "a completions exchange trains on exact token ids: ask for return_token_ids: true (or logprobs with return_tokens_as_token_ids)");
  }
  const converted = exactChoice({ role: "assistant", content: typeof choice.text === "string" ? choice.text : "" }, sampledIds, legacy?.token_logprobs, choice.finish_reason);
  // The prompt is raw text, not a conversation: the exact ids stand for it, with one message as a placeholder.
  return { request: { messages: [{ role: "user", content: "" }] }, response: { choices: [converted], prompt_token_ids: promptIds } };
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (isObject(part) && typeof part.text === "string" ? part.text : "")).join("\n");
}

/** A Responses exchange (`input` items after `instructions`; the output message and function calls as the choice). */
export function responsesExchange(exchange: unknown, loc: Loc): ChatCompletionsExchangeJson {
  const request = isObject(exchange) && isObject(exchange.request) ? exchange.request : undefined;
  const response = isObject(exchange) && isObject(exchange.response) ? exchange.response : undefined;
  if (!request || !response) throw new TrainingInputError(loc, "an exchange needs a request and a response object");
  if (typeof request.previous_response_id === "string" && !isIdList(response.prompt_token_ids)) {
    throw new TrainingInputError([...loc, "request", "previous_response_id"], "a Responses exchange that continues a stored response needs the response's prompt_token_ids (ask for return_token_ids: true)");
  }
  const messages: ChatMessage[] = typeof request.instructions === "string" ? [{ role: "system", content: request.instructions }] : [];
  const input = request.input;
  const items = typeof input === "string" ? [{ role: "user", content: input }] : Array.isArray(input) ? input : [];
  for (const item of items) {
    if (!isObject(item)) continue;
    if (item.type === "function_call") {
      const call = { id: String(item.call_id ?? ""), type: "function", function: { name: String(item.name ?? ""), arguments: item.arguments ?? "{}" } };
      const last = messages.at(-1);
      if (last?.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: "assistant", content: "", tool_calls: [call] });
    } else if (item.type === "function_call_output") messages.push({ role: "tool", tool_call_id: item.call_id, content: textOf(item.output) });
    else if (typeof item.role === "string") messages.push({ role: item.role === "developer" ? "system" : item.role, content: textOf(item.content) });
  }
  const output = Array.isArray(response.output) ? response.output.filter(isObject) : [];
  const text = output
    .filter((item) => item.type === "message")
    .map((item) => textOf(item.content))
    .join("");
  const calls = output.filter((item) => item.type === "function_call").map((item) => ({ id: String(item.call_id ?? ""), type: "function", function: { name: String(item.name ?? ""), arguments: String(item.arguments ?? "") } }));
  const message: ChoiceJson["message"] = { role: "assistant", content: text, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
  const tools: ChatTool[] = (Array.isArray(request.tools) ? request.tools : [])
    .filter((tool): tool is Json => isObject(tool) && tool.type === "function")
    .map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description ?? null, parameters: tool.parameters ?? null } }));
  const choice = exactChoice(message, response.token_ids, response.logprobs, response.status === "incomplete" ? "length" : "stop");
  return { request: { messages, tools: tools.length > 0 ? tools : null }, response: { choices: [choice], prompt_token_ids: isIdList(response.prompt_token_ids) ? response.prompt_token_ids : null } };
}

/** An Anthropic Messages exchange (`system`, text/tool_use/tool_result blocks; the response's blocks as the choice). */
export function messagesExchange(exchange: unknown, loc: Loc): ChatCompletionsExchangeJson {
  const request = isObject(exchange) && isObject(exchange.request) ? exchange.request : undefined;
  const response = isObject(exchange) && isObject(exchange.response) ? exchange.response : undefined;
  if (!request || !response) throw new TrainingInputError(loc, "an exchange needs a request and a response object");
  const messages: ChatMessage[] = [];
  const system = textOf(request.system);
  if (system !== "") messages.push({ role: "system", content: system });
  for (const turn of Array.isArray(request.messages) ? request.messages.filter(isObject) : []) {
    const role = turn.role === "assistant" ? "assistant" : "user";
    if (typeof turn.content === "string") {
      messages.push({ role, content: turn.content });
      continue;
    }
    const blocks = Array.isArray(turn.content) ? turn.content.filter(isObject) : [];
    if (role === "assistant") messages.push(assistantTurn(blocks));
    else {
      let text: string[] = [];
      const flush = () => {
        if (text.length > 0) messages.push({ role: "user", content: text.join("\n") });
        text = [];
      };
      for (const block of blocks) {
        if (block.type === "text") text.push(String(block.text ?? ""));
        else if (block.type === "tool_result") {
          flush();
          messages.push({ role: "tool", tool_call_id: block.tool_use_id, content: textOf(block.content) });
        }
      }
      flush();
    }
  }
  const reply = assistantTurn(Array.isArray(response.content) ? response.content.filter(isObject) : []);
  const tools: ChatTool[] = (Array.isArray(request.tools) ? request.tools : [])
    .filter(isObject)
    .map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description ?? null, parameters: tool.input_schema ?? null } }));
  const finish = response.stop_reason === "max_tokens" ? "length" : response.stop_reason === "tool_use" ? "tool_calls" : "stop";
  const choice = exactChoice({ role: "assistant", content: String(reply.content ?? ""), ...(reply.tool_calls ? { tool_calls: reply.tool_calls } : {}) }, response.token_ids, response.logprobs, finish);
  return { request: { messages, tools: tools.length > 0 ? tools : null }, response: { choices: [choice], prompt_token_ids: isIdList(response.prompt_token_ids) ? response.prompt_token_ids : null } };
}

function assistantTurn(blocks: Json[]): ChatMessage {
  const text = blocks
    .filter((block) => block.type === "text")
    .map((block) => String(block.text ?? ""))
    .join("");
  const calls = blocks.filter((block) => block.type === "tool_use").map((block) => ({ id: String(block.id ?? ""), type: "function", function: { name: String(block.name ?? ""), arguments: JSON.stringify(block.input ?? {}) } }));
  return { role: "assistant", content: text, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}
