import type { ParsedToolCall, ToolCallDelta } from "./hermes-tool-parser.js";
import { pythonJsonDumps } from "../../../python-format.js";
import { arrayElements, completeStringField, rawObjectField } from "./json-text.js";

/**
 * Output of a forced tool choice (`docs/api/chat.md#tool-choice`), which the grammar already shaped:
 * - named: the whole output is the arguments object of that one function;
 * - required: a JSON array of `{"name": ..., "parameters": {...}}`.
 */

export function namedToolCall(name: string, text: string): ParsedToolCall {
  return { name, arguments: text };
}

/** The calls of a `required` output; none when the array is incomplete or malformed (e.g. cut by max_tokens). */
export function requiredToolCalls(text: string): ParsedToolCall[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  const calls: ParsedToolCall[] = [];
  for (const item of value) {
    if (typeof item !== "object" || item === null || typeof (item as Record<string, unknown>).name !== "string") return [];
    const { name, parameters } = item as { name: string; parameters?: unknown };
    calls.push({ name, arguments: pythonJsonDumps(parameters ?? {}, { ensureAscii: false }) });
  }
  return calls;
}

/** Streams a named choice: the output text is the one call's argument text. */
export class NamedToolStream {
  private started = false;

  constructor(
    private readonly name: string,
    private readonly newCallId: () => string,
  ) {}

  push(delta: string): ToolCallDelta[] {
    if (!this.started) {
      if (delta === "") return [];
      this.started = true;
      return [{ index: 0, id: this.newCallId(), type: "function", function: { name: this.name, arguments: delta } }];
    }
    return delta === "" ? [] : [{ index: 0, function: { arguments: delta } }];
  }
}

/** Streams a required choice: each array element's name once complete, then its parameters text as it grows. */
export class RequiredToolStream {
  private text = "";
  private readonly sent: string[] = [];

  constructor(private readonly newCallId: () => string) {}

  push(delta: string): ToolCallDelta[] {
    this.text += delta;
    const deltas: ToolCallDelta[] = [];
    const elements = arrayElements(this.text);
    for (let index = 0; index < elements.length; index++) {
      const element = elements[index]!.value;
      if (this.sent[index] === undefined) {
        const name = completeStringField(element, "name");
        if (name === undefined) break;
        this.sent[index] = "";
        deltas.push({ index, id: this.newCallId(), type: "function", function: { name, arguments: "" } });
      }
      const parameters = rawObjectField(element, "parameters");
      const sent = this.sent[index]!;
      if (parameters && parameters.value.length > sent.length && parameters.value.startsWith(sent)) {
        deltas.push({ index, function: { arguments: parameters.value.slice(sent.length) } });
        this.sent[index] = parameters.value;
      }
    }
    return deltas;
  }
}
