import type { ChatCompletionChunk } from "../completions/protocol.js";
import type { OutputItemOut, ResponsesStreamEvent } from "./protocol.js";
import { type ChatResult, functionCallItem, functionCallItemId, messageItem, outputMessageId, outputTextPart, reasoningItem, reasoningItemId } from "./response.js";

/**
 * Chat completion chunks → the Responses API's streaming events, each with its `type` and a
 * running `sequence_number`: per output item `response.output_item.added`, its deltas
 * (`response.output_text.delta` inside a `response.content_part.added`/`.done` pair,
 * `response.function_call_arguments.delta`, `response.reasoning_text.delta`), their `.done`
 * events and `response.output_item.done`. The caller writes `response.created`/`in_progress`
 * before and `response.completed` (or `.incomplete`) after, from `result()` and `items`.
 */

/** The events that carry a `sequence_number` (all but `error`), as the caller hands them in: without it. */
type SequencedEvent = Extract<ResponsesStreamEvent, { sequence_number: number }>;
type UnnumberedEvent = SequencedEvent extends infer E ? (E extends SequencedEvent ? Omit<E, "sequence_number"> : never) : never;

export type ResponsesEventSink = (event: ResponsesStreamEvent) => Promise<void>;

type OpenItem = { kind: "reasoning"; id: string; text: string } | { kind: "message"; id: string; text: string } | { kind: "function_call"; id: string; toolIndex: number; call: { id: string; name: string; arguments: string } };

export class ResponsesEventStream {
  private sequence = 0;
  private open: OpenItem | null = null;
  /** The finished output items, in order. */
  readonly items: OutputItemOut[] = [];
  private content: string | null = null;
  private reasoning: string | null = null;
  private readonly toolCalls: ChatResult["toolCalls"] = [];
  private finishReason = "stop";
  private usage: ChatResult["usage"] = { prompt_tokens: 0, completion_tokens: 0 };

  constructor(private readonly emit: ResponsesEventSink) {}

  /** Emits one event with the next sequence number. */
  async event(event: UnnumberedEvent): Promise<void> {
    const { type, ...fields } = event;
    await this.emit({ type, sequence_number: this.sequence++, ...fields } as SequencedEvent);
  }

  async push(chunk: ChatCompletionChunk): Promise<void> {
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const { delta } = choice;
      if (delta.reasoning) {
        const item = await this.ensure("reasoning", -1);
        if (item.kind !== "reasoning") continue;
        item.text += delta.reasoning;
        await this.event({ type: "response.reasoning_text.delta", item_id: item.id, output_index: this.items.length, content_index: 0, delta: delta.reasoning });
      }
      if (delta.content) {
        const item = await this.ensure("message", -1);
        if (item.kind !== "message") continue;
        item.text += delta.content;
        await this.event({ type: "response.output_text.delta", item_id: item.id, output_index: this.items.length, content_index: 0, delta: delta.content, logprobs: [] });
      }
      for (const call of delta.tool_calls ?? []) {
        const item = await this.ensure("function_call", call.index, call.id, call.function.name);
        if (item.kind !== "function_call" || !call.function.arguments) continue;
        item.call.arguments += call.function.arguments;
        await this.event({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: this.items.length, delta: call.function.arguments });
      }
      if (choice.finish_reason !== null) this.finishReason = choice.finish_reason;
    }
  }

  /** Closes the last item; then `result()` and `items` describe the whole response. */
  async finish(): Promise<void> {
    await this.close();
  }

  result(): ChatResult {
    return { content: this.content, reasoning: this.reasoning, toolCalls: this.toolCalls, finishReason: this.finishReason, usage: this.usage };
  }

  private async ensure(kind: OpenItem["kind"], toolIndex: number, callId?: string, name?: string): Promise<OpenItem> {
    const open = this.open;
    if (open && open.kind === kind && (kind !== "function_call" || (open.kind === "function_call" && open.toolIndex === toolIndex && callId === undefined))) return open;
    await this.close();
    const outputIndex = this.items.length;
    let item: OpenItem;
    if (kind === "reasoning") {
      item = { kind, id: reasoningItemId(), text: "" };
      await this.event({ type: "response.output_item.added", output_index: outputIndex, item: { type: "reasoning", id: item.id, summary: [], content: [] } });
    } else if (kind === "message") {
      item = { kind, id: outputMessageId(), text: "" };
      await this.event({ type: "response.output_item.added", output_index: outputIndex, item: messageItem(item.id, null, "in_progress") });
      await this.event({ type: "response.content_part.added", item_id: item.id, output_index: outputIndex, content_index: 0, part: outputTextPart("") });
    } else {
      item = { kind, id: functionCallItemId(), toolIndex, call: { id: callId ?? "", name: name ?? "", arguments: "" } };
      await this.event({ type: "response.output_item.added", output_index: outputIndex, item: functionCallItem(item.id, item.call, "in_progress") });
    }
    this.open = item;
    return item;
  }

  private async close(): Promise<void> {
    const item = this.open;
    if (!item) return;
    this.open = null;
    const outputIndex = this.items.length;
    let done: OutputItemOut;
    if (item.kind === "reasoning") {
      this.reasoning = (this.reasoning ?? "") + item.text;
      await this.event({ type: "response.reasoning_text.done", item_id: item.id, output_index: outputIndex, content_index: 0, text: item.text });
      done = reasoningItem(item.id, item.text);
    } else if (item.kind === "message") {
      this.content = (this.content ?? "") + item.text;
      await this.event({ type: "response.output_text.done", item_id: item.id, output_index: outputIndex, content_index: 0, text: item.text, logprobs: [] });
      await this.event({ type: "response.content_part.done", item_id: item.id, output_index: outputIndex, content_index: 0, part: outputTextPart(item.text) });
      done = messageItem(item.id, item.text, "completed");
    } else {
      this.toolCalls.push(item.call);
      await this.event({ type: "response.function_call_arguments.done", item_id: item.id, output_index: outputIndex, name: item.call.name, arguments: item.call.arguments });
      done = functionCallItem(item.id, item.call, "completed");
    }
    this.items.push(done);
    await this.event({ type: "response.output_item.done", output_index: outputIndex, item: done });
  }
}
