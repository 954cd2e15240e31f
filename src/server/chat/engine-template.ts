import { renderChatTemplate } from "../../engine/chat-template.js";
import type { ChatTemplateRenderer } from "./template.js";

/**
 * The chat endpoint's template renderer: the engine's Hugging Face `apply_chat_template`
 * implementation, with the model's special tokens as template variables.
 */
export const renderWithModelTemplate: ChatTemplateRenderer = (model, input) =>
  renderChatTemplate(input.template, {
    // Template messages are plain JSON objects; the renderer takes any object shape.
    messages: input.messages as unknown as Record<string, unknown>[],
    tools: input.tools,
    documents: input.documents,
    addGenerationPrompt: input.addGenerationPrompt,
    continueFinalMessage: input.continueFinalMessage,
    specialTokens: model.info.templateSpecialTokens,
    kwargs: input.variables,
  });
