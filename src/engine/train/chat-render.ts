import type { Tokenizer } from "../tokenizer/types.js";
import type { ChatMessage, ChatTool } from "./trajectory.js";

/**
 * What the trainer needs from the chat template: a renderer that turns messages and tools into the
 * prompt text (Hugging Face `apply_chat_template(..., tokenize=False)` semantics) and the model's
 * tokenizer. Token ids of a rendering are `tokenizer.encode(text)` without added special tokens,
 * which is what `apply_chat_template(tokenize=True)` does.
 */
export interface ChatRenderOptions {
  addGenerationPrompt: boolean;
  /** Leave the final message open: the template's end-of-turn after its content is cut. */
  continueFinalMessage: boolean;
  /** Extra template variables (e.g. `enable_thinking`). */
  templateKwargs: Record<string, unknown>;
}

export type RenderChat = (messages: ChatMessage[], tools: ChatTool[] | undefined, options: ChatRenderOptions) => string;

/** The tokenizer methods the trainer's tokenization uses. */
export type TrainTokenizer = Pick<Tokenizer, "vocabSize" | "eosTokenId" | "encode" | "decode" | "tokenId" | "isSpecial">;

export interface ChatTemplateDeps {
  tokenizer: TrainTokenizer;
  render: RenderChat;
  /** The template source, to detect its conventions (`chatTemplateConventions`). */
  chatTemplate: string;
  /** Caller kwargs; they override the defaults of `chatTemplateConventions`. */
  templateKwargs?: Record<string, unknown>;
}

export interface ChatTemplateConventions {
  /**
   * Default kwargs: `enable_thinking: false` when the template reads it, `preserve_thinking: true` likewise
   * (docs/api/training.md#rl-tokenization step 3).
   */
  templateKwargs: Record<string, unknown>;
  /**
   * The template iterates `tool_call.arguments|items`, so argument strings must be decoded to objects
   * (docs/api/training.md#rl-tokenization step 2).
   */
  decodeToolArguments: boolean;
}

export function chatTemplateConventions(chatTemplate: string, callerKwargs: Record<string, unknown> = {}): ChatTemplateConventions {
  const defaults: Record<string, unknown> = {};
  if (chatTemplate.includes("enable_thinking")) defaults.enable_thinking = false;
  if (chatTemplate.includes("preserve_thinking")) defaults.preserve_thinking = true;
  return {
    templateKwargs: { ...defaults, ...callerKwargs },
    decodeToolArguments: chatTemplate.includes("tool_call.arguments|items"),
  };
}

export function renderIds(deps: ChatTemplateDeps, messages: ChatMessage[], tools: ChatTool[] | undefined, options: Omit<ChatRenderOptions, "templateKwargs">): number[] {
  const { templateKwargs } = chatTemplateConventions(deps.chatTemplate, deps.templateKwargs);
  return deps.tokenizer.encode(deps.render(messages, tools, { ...options, templateKwargs }), { addSpecialTokens: false });
}
