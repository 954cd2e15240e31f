import { pythonJsonDumps } from "../../../python-format.js";
import { completeStringField, partialTagOverlap, rawObjectField } from "./json-text.js";

/**
 * Hermes-style tool calls (`docs/api/chat.md#hermes-parser`): `<tool_call>{"name": ..., "arguments":
 * {...}}</tool_call>` blocks in the generated text, parsed as vLLM's Hermes parser does, in one go and
 * incrementally.
 */

export const TOOL_CALL_START = "<tool_call>";
export const TOOL_CALL_END = "</tool_call>";

export interface ParsedToolCall {
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

/** A streamed fragment of tool call `index`: the first carries id, type and name. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
}

const CALL_PATTERN = /<tool_call>([\s\S]*?)<\/tool_call>|<tool_call>([\s\S]*)/g;

/**
 * The calls in a finished text, or null when it holds none (or any block is not a valid call, in
 * which case the text stays content, as in vLLM). `content` is the text before the first block.
 */
export function extractToolCalls(text: string): { content: string | null; calls: ParsedToolCall[] } | null {
  if (!text.includes(TOOL_CALL_START)) return null;
  const calls: ParsedToolCall[] = [];
  for (const match of text.matchAll(CALL_PATTERN)) {
    const call = parseCall(match[1] ?? match[2] ?? "");
    if (!call) return null;
    calls.push(call);
  }
  const content = text.slice(0, text.indexOf(TOOL_CALL_START));
  return { content: content.trim() === "" ? null : content, calls };
}

function parseCall(json: string): ParsedToolCall | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { name, arguments: args } = value as Record<string, unknown>;
  if (typeof name !== "string" || args === undefined) return undefined;
  // vLLM re-serializes the arguments with json.dumps(..., ensure_ascii=False).
  return { name, arguments: pythonJsonDumps(args, { ensureAscii: false }) };
}

interface StreamedCall {
  name: string;
  /** Argument text sent so far. */
  sent: string;
}

/**
 * Incremental parsing over the growing text: content before the first `<tool_call>` streams (a
 * suffix that could begin the tag is held back), each call's name is sent once complete, then its
 * argument text as it grows. `finish()` flushes what is left.
 */
export class HermesStreamParser {
  private text = "";
  private sentContent = 0;
  private readonly calls: StreamedCall[] = [];

  constructor(private readonly newCallId: () => string) {}

  push(delta: string): { content: string; toolCalls: ToolCallDelta[] } {
    this.text += delta;
    return { content: this.takeContent(false), toolCalls: this.takeToolCalls() };
  }

  finish(): { content: string; toolCalls: ToolCallDelta[] } {
    const content = this.takeContent(true);
    const toolCalls = this.takeToolCalls();
    // Arguments a block's JSON completes only at the end (e.g. scalars) go out now.
    const finished = extractToolCalls(this.text);
    finished?.calls.forEach((call, index) => {
      const streamed = this.calls[index];
      if (streamed && call.arguments.startsWith(streamed.sent) && call.arguments.length > streamed.sent.length) {
        toolCalls.push({ index, function: { arguments: call.arguments.slice(streamed.sent.length) } });
        streamed.sent = call.arguments;
      }
    });
    return { content, toolCalls };
  }

  get toolCallsStarted(): boolean {
    return this.calls.length > 0;
  }

  private takeContent(final: boolean): string {
    const tagAt = this.text.indexOf(TOOL_CALL_START);
    const sendable = tagAt >= 0 ? tagAt : this.text.length - (final ? 0 : partialTagOverlap(this.text, TOOL_CALL_START));
    if (sendable <= this.sentContent) return "";
    const content = this.text.slice(this.sentContent, sendable);
    this.sentContent = sendable;
    return content;
  }

  private takeToolCalls(): ToolCallDelta[] {
    const deltas: ToolCallDelta[] = [];
    const regions = callRegions(this.text);
    for (let index = 0; index < regions.length; index++) {
      const region = regions[index]!;
      let call = this.calls[index];
      if (!call) {
        const name = completeStringField(region, "name");
        if (name === undefined) break;
        call = { name, sent: "" };
        this.calls.push(call);
        deltas.push({ index, id: this.newCallId(), type: "function", function: { name, arguments: "" } });
      }
      const args = rawObjectField(region, "arguments");
      if (args && args.value.length > call.sent.length && args.value.startsWith(call.sent)) {
        deltas.push({ index, function: { arguments: args.value.slice(call.sent.length) } });
        call.sent = args.value;
      }
    }
    return deltas;
  }
}

/** The JSON text of each `<tool_call>` block so far (the last may be unterminated, minus a partial end tag). */
function callRegions(text: string): string[] {
  const regions: string[] = [];
  let position = 0;
  for (;;) {
    const start = text.indexOf(TOOL_CALL_START, position);
    if (start < 0) return regions;
    const bodyStart = start + TOOL_CALL_START.length;
    const end = text.indexOf(TOOL_CALL_END, bodyStart);
    if (end < 0) {
      const body = text.slice(bodyStart);
      regions.push(body.slice(0, body.length - partialTagOverlap(body, TOOL_CALL_END)).trim());
      return regions;
    }
    regions.push(text.slice(bodyStart, end).trim());
    position = end + TOOL_CALL_END.length;
  }
}
