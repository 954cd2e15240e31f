import { pythonStr } from "../../../python-format.js";
import { ApiError } from "../../errors.js";

/**
 * The chat endpoint's errors beyond the schema (docs/api/chat.md#errors): 400 with vLLM's message texts,
 * `type` and `param` (`docs/api/chat.md#errors`), and the 404 of an unknown model. Values inside
 * messages are written the way Python prints them, because vLLM's texts are Python f-strings and
 * clients match substrings of them (`got 3.0.`, `[1, 2]`).
 */

export interface RuleErrorOptions {
  /** The request field at fault (`param` of the error body); null when vLLM names none. */
  param?: string | null;
  /** The rejected value, appended as vLLM's `VLLMValidationError` does: ` (parameter=X, value=Y)`. */
  value?: unknown;
  /** Format numeric values as Python floats. */
  float?: boolean;
}

/** A 400 for a chat rule, with vLLM's message text and `BadRequestError` type. */
export function chatRuleError(message: string, options: RuleErrorOptions = {}): ApiError {
  const extras: string[] = [];
  if (options.value !== undefined) {
    if (options.param) extras.push(`parameter=${options.param}`);
    extras.push(`value=${pythonStr(options.value, { float: options.float })}`);
  }
  const text = extras.length > 0 ? `${message} (${extras.join(", ")})` : message;
  return new ApiError(400, text, { param: options.param ?? null, type: "BadRequestError" });
}

/** The 404 of an unknown model, or of another entity's model (indistinguishable on purpose). */
export function modelNotFound(name: string): ApiError {
  return new ApiError(404, `The model \`${name}\` does not exist.`, { param: "model", type: "NotFoundError" });
}
