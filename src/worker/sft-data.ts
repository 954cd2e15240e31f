import { type ChatMessage, isChoice, nonChatSftExchangeMessage, OTHER_EXCHANGE_KINDS } from "../engine/train/trajectory.js";

/**
 * SFT training data (docs/api/training.md#sft-jobs, docs/api/training.md#sft): one JSON object per line,
 * `{"messages": [...], "tools": [...]}` as ART writes `train.jsonl`. Lines in trajectory form
 * (`messages_and_choices`) are accepted too and converted the way ART's `Trajectory.messages()` does, as are
 * lines in its newer `exchanges` form.
 */

export interface SftRow {
  messages: ChatMessage[];
  tools?: unknown[];
}

/** Training data that cannot be used; the message names the file and line. */
export class SftDataError extends Error {}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

/** The file of an artifact that holds the rows: train.jsonl, else trajectories.jsonl, else its only .jsonl file. */
export function pickSftDataFile(fileNames: string[]): string | undefined {
  for (const preferred of ["train.jsonl", "trajectories.jsonl"]) if (fileNames.includes(preferred)) return preferred;
  const jsonl = fileNames.filter((name) => name.endsWith(".jsonl"));
  return jsonl.length === 1 ? jsonl[0] : undefined;
}

/** Parses and checks every line; throws SftDataError at the first bad one. Blank lines are skipped. */
export function parseSftRows(text: string, fileName: string): SftRow[] {
  const rows: SftRow[] = [];
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    if (line === "") continue;
    const where = `${fileName} line ${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new SftDataError(`${where}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    rows.push(toRow(value, where));
  }
  return rows;
}

function toRow(value: unknown, where: string): SftRow {
  if (!isRecord(value)) throw new SftDataError(`${where}: expected a JSON object with "messages"`);
  if (value.messages === undefined && isRecord(value.exchanges)) return exchangesRow(value.exchanges, where);
  const source = value.messages ?? value.messages_and_choices;
  if (!Array.isArray(source) || source.length === 0) throw new SftDataError(`${where}: "messages" must be a non-empty list`);
  const messages = source.map((item, position) => toMessage(item, `${where}, message ${position}`));
  if (messages[messages.length - 1]!.role !== "assistant") throw new SftDataError(`${where}: the last message must have role "assistant"`);
  const tools = value.tools;
  if (tools !== undefined && tools !== null && !Array.isArray(tools)) throw new SftDataError(`${where}: "tools" must be a list`);
  return Array.isArray(tools) && tools.length > 0 ? { messages, tools } : { messages };
}

/**
 * A trajectory line in ART's exchanges form: its last Chat Completions exchange is the whole
 * conversation (the request's messages, which carry the earlier turns, and the response's choice).
 */
function exchangesRow(exchanges: Record<string, unknown>, where: string): SftRow {
  for (const kind of OTHER_EXCHANGE_KINDS) {
    const list = exchanges[kind];
    if (Array.isArray(list) && list.length > 0) throw new SftDataError(`${where}: ${nonChatSftExchangeMessage(kind)}`);
  }
  const list = exchanges.chat_completions;
  const last = Array.isArray(list) ? list[list.length - 1] : undefined;
  const request = isRecord(last) ? last.request : undefined;
  const response = isRecord(last) ? last.response : undefined;
  const choices = isRecord(response) ? response.choices : undefined;
  if (!isRecord(request) || !Array.isArray(request.messages) || !Array.isArray(choices) || choices.length !== 1) {
    throw new SftDataError(`${where}: a trajectory in the exchanges form needs a chat_completions exchange with request messages and one response choice`);
  }
  return toRow({ messages: [...request.messages, choices[0]], tools: request.tools }, where);
}

function toMessage(item: unknown, where: string): ChatMessage {
  if (isChoice(item)) {
    const { content, tool_calls } = item.message;
    return Array.isArray(tool_calls) && tool_calls.length > 0 ? { role: "assistant", content: content ?? "", tool_calls } : { role: "assistant", content: content ?? "" };
  }
  if (!isRecord(item) || typeof item.role !== "string") throw new SftDataError(`${where}: expected a message object with a "role"`);
  if (!ROLES.has(item.role)) throw new SftDataError(`${where}: role "${item.role}" is not one of ${[...ROLES].join(", ")}`);
  return { ...item, role: item.role, content: item.content ?? "" };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
