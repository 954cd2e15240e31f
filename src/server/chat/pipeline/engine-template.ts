import type { ChatTemplatePool } from "../../../engine/chat-template-pool.js";
import type { ChatTemplateRenderer } from "./template.js";

/**
 * The chat endpoint's template renderer: the engine's Hugging Face `apply_chat_template`
 * implementation on the pool's threads (off the event loop, within its limits), with the model's
 * special tokens as template variables. The same thread tokenizes the render when the tokenizer
 * was read from a checkpoint directory (every served model's is); a tokenizer that exists only in
 * memory (tests) tokenizes here.
 */
export function templateRendererOn(pool: ChatTemplatePool): ChatTemplateRenderer {
  return async (model, input, { addSpecialTokens }) => {
    const { tokenizer } = model;
    const tokenize = tokenizer.sourceDir === undefined ? undefined : { tokenizerDir: tokenizer.sourceDir, addSpecialTokens };
    const rendered = await pool.render(
      input.template,
      {
        // Template messages are plain JSON objects; the renderer takes any object shape.
        messages: input.messages as unknown as Record<string, unknown>[],
        tools: input.tools,
        documents: input.documents,
        addGenerationPrompt: input.addGenerationPrompt,
        continueFinalMessage: input.continueFinalMessage,
        specialTokens: model.info.templateSpecialTokens,
        kwargs: input.variables,
      },
      tokenize,
    );
    return { text: rendered.text, tokenIds: rendered.tokenIds ?? tokenizer.encode(rendered.text, { addSpecialTokens }) };
  };
}
