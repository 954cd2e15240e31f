import { ApiError } from "../errors.js";

/**
 * The chat endpoint's errors beyond the schema (docs/api/chat.md#errors): 400 with vLLM's message texts,
 * `type` and `param` (`docs/api/chat.md#errors`), and the 404 of an unknown model. Values inside
 * messages are written the way Python prints them, because vLLM's texts are Python f-strings and
 * clients match substrings of them (`got 3.0.`, `[1, 2]`).
 */

/** Python's `str()` of a JSON-like value: floats keep a `.0`, lists and dicts use `, ` and `: `. */
export function pythonStr(value: unknown, options: { float?: boolean } = {}): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return options.float ? pythonFloat(value) : Number.isInteger(value) ? String(value) : pythonFloat(value);
  if (typeof value === "string") return value;
  return pythonRepr(value, options);
}

/** Python's `repr()`: strings quoted with `'`. */
export function pythonRepr(value: unknown, options: { float?: boolean } = {}): string {
  if (typeof value === "string") return `'${value.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
  if (Array.isArray(value)) return `[${value.map((item) => pythonRepr(item, options)).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value).map(([key, item]) => `${pythonRepr(key)}: ${pythonRepr(item, options)}`).join(", ")}}`;
  }
  return pythonStr(value, options);
}

/** How Python prints a float: `3.0`, `0.5`, `inf`, `nan`, `1e+16`. */
export function pythonFloat(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude >= 1e16 || magnitude < 1e-4)) {
    return value.toExponential().replace(/e([+-])(\d)$/, "e$10$2");
  }
  return Number.isInteger(value) ? value.toFixed(1) : String(value);
}

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
