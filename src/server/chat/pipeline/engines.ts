import type { InferenceEngine } from "../../../engine/api.js";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import type { ChatTemplateRenderer } from "./template.js";

/**
 * What the chat endpoint needs from the engine layer, injected through `AppServices.engines`:
 * the engine serving a base model (loaded on first use, shared by every request for that model,
 * adapters applied per request), and the chat template renderer.
 */
export interface ChatEngines {
  /** The engine for a served base model id. Throws if the model cannot be loaded. */
  get(baseModelId: string): Promise<InferenceEngine>;
  renderChatTemplate: ChatTemplateRenderer;
}

/** Output formats a model's vocabulary supports, found from its tokens. */
export interface ChatFeatures {
  /** `<think>` and `</think>` are tokens: reasoning is split off into `message.reasoning`. */
  reasoning: boolean;
  /** `<tool_call>` and `</tool_call>` are tokens: tool_choice "auto" parses Hermes-style calls. */
  hermesToolCalls: boolean;
  thinkEndTokenId: number | undefined;
}

export function chatFeatures(tokenizer: Tokenizer): ChatFeatures {
  const has = (token: string) => tokenizer.tokenId(token) !== undefined;
  return {
    reasoning: has("<think>") && has("</think>"),
    hermesToolCalls: has("<tool_call>") && has("</tool_call>"),
    thinkEndTokenId: tokenizer.tokenId("</think>"),
  };
}
