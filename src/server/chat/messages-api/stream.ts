import type { ChatCompletionChunk } from "../completions/protocol.js";
import type { ContentBlockOut, MessagesStreamEvent } from "./protocol.js";
import { type StopInfo, stopInfo } from "./response.js";

/**
 * Chat completion chunks → Anthropic's streaming events: `message_start` (with the prompt's token
 * count), a `ping`, then per content block `content_block_start`, its deltas (`text_delta`,
 * `thinking_delta`, `input_json_delta`) and `content_block_stop`; at the end `message_delta` (stop
 * reason and output tokens) and `message_stop`. The chat core's stream parsers decide what is text,
 * reasoning or a tool call, so a streamed message says what the whole one says.
 */

export type MessagesEventSink = (event: MessagesStreamEvent) => Promise<void>;

type BlockDelta = Extract<MessagesStreamEvent, { type: "content_block_delta" }>["delta"];

type BlockKind = "text" | "thinking" | "tool_use";

export class AnthropicEventStream {
  private started = false;
  private blockIndex = -1;
  private openBlock: { kind: BlockKind; toolIndex: number } | null = null;
  private stop: StopInfo = { stop_reason: "end_turn", stop_sequence: null };
  private outputTokens = 0;

  constructor(
    private readonly emit: MessagesEventSink,
    private readonly meta: { id: string; model: string; stopSequences: readonly string[] },
  ) {}

  async push(chunk: ChatCompletionChunk): Promise<void> {
    if (!this.started) {
      this.started = true;
      const usage = { input_tokens: chunk.usage?.prompt_tokens ?? 0, output_tokens: 0 };
      await this.emit({ type: "message_start", message: { id: this.meta.id, type: "message", role: "assistant", model: this.meta.model, content: [], stop_reason: null, stop_sequence: null, usage } });
      await this.emit({ type: "ping" });
    }
    if (chunk.usage) this.outputTokens = chunk.usage.completion_tokens;
    for (const choice of chunk.choices) {
      const { delta } = choice;
      if (delta.reasoning) {
        await this.ensureBlock("thinking", -1, { type: "thinking", thinking: "", signature: "" });
        await this.delta({ type: "thinking_delta", thinking: delta.reasoning });
      }
      if (delta.content) {
        await this.ensureBlock("text", -1, { type: "text", text: "" });
        await this.delta({ type: "text_delta", text: delta.content });
      }
      for (const call of delta.tool_calls ?? []) {
        if (call.id !== undefined || this.openBlock?.kind !== "tool_use" || this.openBlock.toolIndex !== call.index) {
          await this.ensureBlock("tool_use", call.index, { type: "tool_use", id: call.id ?? "", name: call.function.name ?? "", input: {} });
        }
        if (call.function.arguments) await this.delta({ type: "input_json_delta", partial_json: call.function.arguments });
      }
      if (choice.finish_reason !== null) this.stop = stopInfo(choice.finish_reason, choice.stop_reason ?? null, this.meta.stopSequences);
    }
  }

  async finish(): Promise<void> {
    await this.closeBlock();
    await this.emit({ type: "message_delta", delta: this.stop, usage: { output_tokens: this.outputTokens } });
    await this.emit({ type: "message_stop" });
  }

  private async ensureBlock(kind: BlockKind, toolIndex: number, contentBlock: ContentBlockOut): Promise<void> {
    if (this.openBlock && this.openBlock.kind === kind && this.openBlock.toolIndex === toolIndex) return;
    await this.closeBlock();
    this.blockIndex++;
    this.openBlock = { kind, toolIndex };
    await this.emit({ type: "content_block_start", index: this.blockIndex, content_block: contentBlock });
  }

  private async delta(delta: BlockDelta): Promise<void> {
    await this.emit({ type: "content_block_delta", index: this.blockIndex, delta });
  }

  private async closeBlock(): Promise<void> {
    if (!this.openBlock) return;
    this.openBlock = null;
    await this.emit({ type: "content_block_stop", index: this.blockIndex });
  }
}
