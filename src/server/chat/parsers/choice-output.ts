import type { FinishReason } from "../../../engine/api.js";
import { NamedToolStream, namedToolCall, RequiredToolStream, requiredToolCalls } from "./forced-tools.js";
import { extractToolCalls, HermesStreamParser, type ParsedToolCall, type ToolCallDelta } from "./hermes-tool-parser.js";
import { type ReasoningStart, ReasoningSplitter, splitReasoning } from "./reasoning-parser.js";
import type { ToolChoice } from "../pipeline/tool-choice.js";

/**
 * From a choice's generated text to the message: reasoning split off first, then tool calls parsed from what
 * remains (`docs/api/chat.md#tools`, `docs/api/chat.md#reasoning`), for a whole response (`finalMessage`) and
 * delta by delta for a stream (`ChoiceStream`). Both use the same parsers, so a stream and a whole response
 * of the same text say the same thing.
 */

export interface OutputOptions {
  /** Where reasoning starts; null when the model has no `<think>` tokens (no reasoning parsing). */
  reasoning: ReasoningStart | null;
  includeReasoning: boolean;
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  newToolCallId: () => string;
}

export interface ToolCallOut {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface FinalMessage {
  content: string | null;
  reasoning: string | null;
  toolCalls: ToolCallOut[];
  finishReason: string;
}

/** The message and finish reason of a finished choice. */
export function finalMessage(text: string, engineFinish: FinishReason, options: OutputOptions): FinalMessage {
  const split = options.reasoning === null ? { reasoning: null, content: text } : splitReasoning(text, options.reasoning);
  const reasoning = options.includeReasoning ? split.reasoning : null;
  let content = split.content;
  let calls: ParsedToolCall[] = [];
  let finishReason: string = engineFinish;
  switch (options.toolChoice.kind) {
    case "auto": {
      const extracted = extractToolCalls(content ?? "");
      if (extracted) {
        content = extracted.content;
        calls = extracted.calls;
        finishReason = "tool_calls";
      }
      break;
    }
    case "named":
      calls = [namedToolCall(options.toolChoice.name, content ?? "")];
      content = "";
      break;
    case "required":
      calls = requiredToolCalls(content ?? "");
      content = "";
      if (engineFinish === "stop") finishReason = "tool_calls";
      break;
    case "none":
      break;
  }
  if (!options.parallelToolCalls) calls = calls.slice(0, 1);
  const toolCalls = calls.map((call) => ({ id: options.newToolCallId(), type: "function" as const, function: call }));
  return { content, reasoning, toolCalls, finishReason };
}

export interface MessageDelta {
  content?: string;
  reasoning?: string;
  tool_calls?: ToolCallDelta[];
}

/** One choice of a stream: text deltas in, message deltas out (null when a parser holds the text back). */
export class ChoiceStream {
  private readonly splitter: ReasoningSplitter | null;
  private readonly hermes: HermesStreamParser | null = null;
  private readonly named: NamedToolStream | null = null;
  private readonly required: RequiredToolStream | null = null;
  private sentToolCalls = false;

  constructor(private readonly options: OutputOptions) {
    this.splitter = options.reasoning === null ? null : new ReasoningSplitter(options.reasoning);
    const choice = options.toolChoice;
    if (choice.kind === "auto") this.hermes = new HermesStreamParser(options.newToolCallId);
    if (choice.kind === "named") this.named = new NamedToolStream(choice.name, options.newToolCallId);
    if (choice.kind === "required") this.required = new RequiredToolStream(options.newToolCallId);
  }

  /** Whether tool-call deltas went out (the finish reason becomes `tool_calls` for auto and required). */
  get toolCallsStreamed(): boolean {
    return this.sentToolCalls;
  }

  push(text: string): MessageDelta | null {
    const split = this.splitter ? this.splitter.push(text) : { reasoning: "", content: text };
    return this.delta(split.reasoning, this.toolStage(split.content, false));
  }

  finish(): MessageDelta | null {
    const split = this.splitter ? this.splitter.finish() : { reasoning: "", content: "" };
    return this.delta(split.reasoning, this.toolStage(split.content, true));
  }

  /** The finish reason of a streamed choice: `tool_calls` when auto/required calls went out and the engine stopped. */
  finishReason(engineFinish: FinishReason): string {
    return this.sentToolCalls && this.options.toolChoice.kind !== "named" && engineFinish === "stop" ? "tool_calls" : engineFinish;
  }

  private toolStage(content: string, final: boolean): { content: string; toolCalls: ToolCallDelta[] } {
    if (this.hermes) return final ? mergeStage(this.hermes.push(content), this.hermes.finish()) : this.hermes.push(content);
    if (this.named) return { content: "", toolCalls: this.named.push(content) };
    if (this.required) return { content: "", toolCalls: this.required.push(content) };
    return { content, toolCalls: [] };
  }

  private delta(reasoning: string, stage: { content: string; toolCalls: ToolCallDelta[] }): MessageDelta | null {
    const delta: MessageDelta = {};
    if (reasoning !== "" && this.options.includeReasoning) delta.reasoning = reasoning;
    if (stage.content !== "") delta.content = stage.content;
    const toolCalls = this.options.parallelToolCalls ? stage.toolCalls : stage.toolCalls.filter((call) => call.index === 0);
    if (toolCalls.length > 0) {
      delta.tool_calls = toolCalls;
      this.sentToolCalls = true;
    }
    return Object.keys(delta).length > 0 ? delta : null;
  }
}

function mergeStage(first: { content: string; toolCalls: ToolCallDelta[] }, second: { content: string; toolCalls: ToolCallDelta[] }): { content: string; toolCalls: ToolCallDelta[] } {
  return { content: first.content + second.content, toolCalls: [...first.toolCalls, ...second.toolCalls] };
}
