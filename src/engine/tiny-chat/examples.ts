import type { ChatMessage } from "../train/trajectory.js";
import type { ToolDefinition } from "./tools.js";

/** The held-out accuracy is reported per task. */
export const TASK_NAMES = ["arithmetic", "tool_call", "tool_answer", "json", "conversation", "three_terms"] as const;
export type TaskName = (typeof TASK_NAMES)[number];

/** What a correct reply to an example's prompt holds; `checkReply` applies it. */
export type Expectation =
  /** The first number in the reply is this one. */
  | { kind: "number"; value: number }
  /** Exactly one Hermes `<tool_call>` block calling this function with these arguments. */
  | { kind: "tool_call"; name: string; arguments: Record<string, unknown> }
  /** Every one of these strings appears in the reply as a whole word or number (case-insensitive). */
  | { kind: "contains"; values: string[] }
  /** The reply is a JSON object equal to this one (key order free). */
  | { kind: "json"; value: Record<string, unknown> };

export interface TinyChatExample {
  task: TaskName;
  /**
   * The identity of the content (e.g. `add:47:38`, `capital:2:France`): every phrasing of a key
   * lands in the same split, so held-out examples are never seen in training in another wording.
   */
  key: string;
  /** The conversation, ending with the assistant reply the model is trained to give. */
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  expected: Expectation;
}

/** A flat object as Python's json.dumps writes it (", " and ": "), the style of the chat template's tojson. */
export function jsonText(value: Record<string, string | number>): string {
  return `{${Object.entries(value)
    .map(([key, item]) => `${JSON.stringify(key)}: ${JSON.stringify(item)}`)
    .join(", ")}}`;
}

/** Fills `{name}` slots of a phrasing. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`no value for {${name}} in "${template}"`);
    return String(values[name]);
  });
}
