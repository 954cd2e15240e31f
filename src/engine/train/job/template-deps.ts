import { renderChatTemplate, resolveChatTemplate } from "../../chat-template.js";
import type { ModelFiles } from "../../model/load.js";
import type { ChatTemplateDeps } from "../chat-render.js";

/**
 * The trainer's view of a model's chat template (HF `apply_chat_template(tokenize=False)`): the
 * model's default template with its special tokens as variables, rendered by the same code as the
 * chat endpoint's prompts, so trained sequences start exactly as sampled ones did. A model without
 * a template fails here with transformers' message.
 */
export function modelTemplateDeps(model: ModelFiles): ChatTemplateDeps {
  const chatTemplate = resolveChatTemplate(model.chatTemplates);
  return {
    tokenizer: model.tokenizer,
    chatTemplate,
    render: (messages, tools, options) =>
      renderChatTemplate(chatTemplate, {
        messages: messages as Record<string, unknown>[],
        tools,
        addGenerationPrompt: options.addGenerationPrompt,
        continueFinalMessage: options.continueFinalMessage,
        kwargs: options.templateKwargs,
        specialTokens: model.templateSpecialTokens,
      }),
  };
}
