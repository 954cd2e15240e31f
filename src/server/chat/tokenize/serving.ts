import { chatRuleError } from "../common/chat-errors.js";
import type { PrepareContext } from "../pipeline/prepare.js";
import { resolveTarget } from "../pipeline/prepare.js";
import { checkRequestLimits } from "../pipeline/request-limits.js";
import { checkRequestRules } from "../pipeline/request-rules.js";
import { ChatCompletionReq } from "../completions/protocol.js";
import { renderPrompt } from "../pipeline/template.js";
import type { DetokenizeRequest, DetokenizeResponse, TokenizeRequest, TokenizeResponse } from "./protocol.js";

/**
 * Tokenizing and detokenizing with a served model's tokenizer, as vLLM answers them. The chat form
 * renders the messages exactly as `POST /v1/chat/completions` would (same template selection,
 * variables and rules), so `tokens` are the ids that endpoint would feed the model.
 */

export async function tokenize(req: TokenizeRequest, ctx: PrepareContext): Promise<TokenizeResponse> {
  const target = await resolveTarget(req.model, ctx);
  const { tokenizer } = target;
  let tokens: number[];
  if ("messages" in req) {
    const chat = ChatCompletionReq.parse({
      messages: req.messages,
      tools: req.tools,
      add_generation_prompt: req.add_generation_prompt,
      continue_final_message: req.continue_final_message,
      add_special_tokens: req.add_special_tokens,
      chat_template: req.chat_template,
      chat_template_kwargs: req.chat_template_kwargs,
    });
    checkRequestLimits(chat, ctx.limits);
    checkRequestRules(chat, { logprobs: false });
    tokens = (await renderPrompt(chat, target, ctx.engines!.renderChatTemplate)).tokenIds;
  } else {
    if (req.prompt.length > ctx.limits.maxPromptChars) {
      throw chatRuleError(`The prompt holds more than ${ctx.limits.maxPromptChars} characters, this server's limit for a prompt (FLYWHEEL_MAX_PROMPT_CHARS).`, { param: "prompt" });
    }
    tokens = tokenizer.encode(req.prompt, { addSpecialTokens: req.add_special_tokens });
  }
  return {
    count: tokens.length,
    max_model_len: target.info.maxModelLen,
    tokens,
    token_strs: req.return_token_strs ? tokens.map((id) => tokenizer.tokenString(id) ?? "") : null,
  };
}

export async function detokenize(req: DetokenizeRequest, ctx: PrepareContext): Promise<DetokenizeResponse> {
  const { tokenizer } = await resolveTarget(req.model, ctx);
  const outside = req.tokens.filter((id) => id < 0 || id >= tokenizer.vocabSize);
  if (outside.length > 0) throw chatRuleError(`Token id ${outside[0]} is out of vocabulary (vocabulary size ${tokenizer.vocabSize}).`, { param: "tokens" });
  return { prompt: tokenizer.decode(req.tokens, { skipSpecialTokens: false }) };
}
