import { TOOL_CALL_START } from "./hermes-tool-parser.js";
import { partialTagOverlap } from "./json-text.js";

/**
 * `<think>…</think>` reasoning (`docs/api/chat.md#reasoning`), with Qwen3's semantics: where the template
 * already opened `<think>`, output starts inside reasoning; a `<think>` the model writes at the
 * start opens it; `</think>` (or a `<tool_call>`, which Qwen3 may write without closing its
 * thoughts) ends it; output that never closes its reasoning is all reasoning (cut short).
 * Works on text deltas so streaming and whole responses split identically.
 */

export const THINK_START = "<think>";
export const THINK_END = "</think>";

/** Where generation starts, read from the end of the rendered prompt. */
export type ReasoningStart = "undecided" | "reasoning" | "content";

/**
 * `reasoning` when the prompt's last think tag is an open `<think>` (Qwen3.5-style templates, or a
 * prefilled thought); `content` when it ends with a closed `<think></think>` block (thinking switched
 * off); otherwise the model decides by writing `<think>` first or not.
 */
export function reasoningStartOf(promptText: string): ReasoningStart {
  const open = promptText.lastIndexOf(THINK_START);
  const close = promptText.lastIndexOf(THINK_END);
  if (open > close) return "reasoning";
  if (close >= 0 && promptText.slice(close + THINK_END.length).trim() === "") return "content";
  return "undecided";
}

export interface ReasoningDelta {
  reasoning: string;
  content: string;
}

type SplitterState = "undecided" | "reasoning-start" | "reasoning" | "content";

export class ReasoningSplitter {
  private state: SplitterState;
  /** Text not yet attributed: a possible start/end tag in the making. */
  private pending = "";
  private sawReasoning: boolean;

  constructor(start: ReasoningStart) {
    this.state = start === "reasoning" ? "reasoning-start" : start;
    this.sawReasoning = start === "reasoning";
  }

  /** Whether any output was attributed to reasoning (then empty content is null, not ""). */
  get hadReasoning(): boolean {
    return this.sawReasoning;
  }

  push(delta: string): ReasoningDelta {
    this.pending += delta;
    return this.drain(false);
  }

  finish(): ReasoningDelta {
    return this.drain(true);
  }

  private drain(final: boolean): ReasoningDelta {
    const out: ReasoningDelta = { reasoning: "", content: "" };
    for (;;) {
      switch (this.state) {
        case "content":
          out.content += this.pending;
          this.pending = "";
          return out;
        case "undecided":
        case "reasoning-start": {
          // A `<think>` written first opens reasoning; inside reasoning already it is dropped (older Qwen3 templates).
          const trimmed = this.pending.trimStart();
          if (trimmed.startsWith(THINK_START)) {
            this.pending = trimmed.slice(THINK_START.length);
            this.state = "reasoning";
            this.sawReasoning = true;
            continue;
          }
          if (!final && THINK_START.startsWith(trimmed)) return out;
          this.state = this.state === "undecided" ? "content" : "reasoning";
          continue;
        }
        case "reasoning": {
          const end = this.pending.indexOf(THINK_END);
          const call = this.pending.indexOf(TOOL_CALL_START);
          if (end >= 0 || call >= 0) {
            const closedByTag = end >= 0 && (call < 0 || end < call);
            const at = closedByTag ? end : call;
            out.reasoning += this.pending.slice(0, at);
            // The end tag is dropped; a tool call stays, as content for the tool parser.
            this.pending = this.pending.slice(closedByTag ? end + THINK_END.length : call);
            this.state = "content";
            continue;
          }
          const hold = final ? 0 : Math.max(partialTagOverlap(this.pending, THINK_END), partialTagOverlap(this.pending, TOOL_CALL_START));
          out.reasoning += this.pending.slice(0, this.pending.length - hold);
          this.pending = this.pending.slice(this.pending.length - hold);
          return out;
        }
      }
    }
  }
}

/** Splits a finished output; `reasoning` is null when none was produced, `content` null when empty after reasoning. */
export function splitReasoning(text: string, start: ReasoningStart): { reasoning: string | null; content: string | null } {
  const splitter = new ReasoningSplitter(start);
  const first = splitter.push(text);
  const rest = splitter.finish();
  const reasoning = first.reasoning + rest.reasoning;
  const content = first.content + rest.content;
  if (!splitter.hadReasoning) return { reasoning: null, content };
  return { reasoning, content: content === "" ? null : content };
}
