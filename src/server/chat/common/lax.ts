import { z } from "zod";

/**
 * Zod types with pydantic's "lax" coercion, which vLLM's request model uses (`docs/api/chat.md#transport`):
 * booleans accept `"true"`/`"false"` and 0/1, integers accept integral floats and numeric strings,
 * floats accept numeric strings (and `"inf"`/`"nan"`, which the chat rules then reject with vLLM's
 * texts). Failures carry pydantic's type names so the 422 body reads like FastAPI's.
 */

const TRUE_STRINGS = new Set(["true", "1", "yes", "on", "t", "y"]);
const FALSE_STRINGS = new Set(["false", "0", "no", "off", "f", "n"]);
const INTEGER_STRING = /^[+-]?\d+$/;
const FLOAT_STRING = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const NON_FINITE_STRING = /^([+-]?)(inf|infinity|nan)$/i;

/** Why a value could not be coerced, with pydantic's message and type name. */
export class Issue {
  constructor(
    readonly message: string,
    readonly type: string,
  ) {}
}

const missing = new Issue("Field required", "missing");

function fail(ctx: z.core.$RefinementCtx, issue: Issue): never {
  ctx.addIssue({ code: "custom", message: issue.message, params: { type: issue.type } });
  return z.NEVER as never;
}

export function coerceBool(value: unknown): boolean | Issue {
  if (typeof value === "boolean") return value;
  if (value === 0 || value === 1) return value === 1;
  if (typeof value === "string") {
    const lowered = value.trim().toLowerCase();
    if (TRUE_STRINGS.has(lowered)) return true;
    if (FALSE_STRINGS.has(lowered)) return false;
    return new Issue("Input should be a valid boolean, unable to interpret input", "bool_parsing");
  }
  return new Issue("Input should be a valid boolean", "bool_type");
}

export function coerceInt(value: unknown): number | Issue {
  if (typeof value === "number") {
    if (Number.isInteger(value)) return value;
    if (!Number.isFinite(value)) return new Issue("Input should be a finite number", "finite_number");
    return new Issue("Input should be a valid integer, got a number with a fractional part", "int_from_float");
  }
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (INTEGER_STRING.test(trimmed)) return Number(trimmed);
    return new Issue("Input should be a valid integer, unable to parse string as an integer", "int_parsing");
  }
  return new Issue("Input should be a valid integer", "int_type");
}

export function coerceFloat(value: unknown): number | Issue {
  if (typeof value === "number") return value;
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (FLOAT_STRING.test(trimmed)) return Number(trimmed);
    const nonFinite = NON_FINITE_STRING.exec(trimmed);
    if (nonFinite) {
      if (nonFinite[2]!.toLowerCase() === "nan") return Number.NaN;
      return nonFinite[1] === "-" ? -Infinity : Infinity;
    }
    return new Issue("Input should be a valid number, unable to parse string as a number", "float_parsing");
  }
  return new Issue("Input should be a valid number", "float_type");
}

function laxType<T>(coerce: (value: unknown) => T | Issue, jsonType: string) {
  return z
    .unknown()
    .transform((value, ctx): T => {
      if (value === undefined) return fail(ctx, missing);
      const result = coerce(value);
      if (result instanceof Issue) return fail(ctx, result);
      return result;
    })
    .meta({ type: jsonType });
}

/** A boolean with pydantic's lax coercion. */
export const laxBool = () => laxType(coerceBool, "boolean");

/** An integer with pydantic's lax coercion, optionally bounded (bounds are schema ranges: 422). */
export function laxInt(bounds: { min?: number; max?: number } = {}) {
  let checked = z.number();
  if (bounds.min !== undefined) checked = checked.min(bounds.min);
  if (bounds.max !== undefined) checked = checked.max(bounds.max);
  return laxType(coerceInt, "integer").pipe(checked).meta({ type: "integer" });
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/**
 * An integer checked exactly against bounds beyond 2^53 (by default signed 64-bit, as vLLM's
 * `seed` and `priority`): an integer too large for a double arrives as its decimal text (see
 * `keepExactTopLevelIntegers`), or as a number whose exact value is compared. The result is the
 * nearest double, which is what the engine uses.
 */
export function laxInt64(bounds: { min?: bigint; max?: bigint } = {}) {
  const min = bounds.min ?? INT64_MIN;
  const max = bounds.max ?? INT64_MAX;
  const coerce = (value: unknown): number | Issue => {
    let exact: bigint;
    if (typeof value === "string" && INTEGER_STRING.test(value.trim())) exact = BigInt(value.trim());
    else {
      const number = coerceInt(value);
      if (number instanceof Issue) return number;
      exact = BigInt(number);
    }
    if (exact < min) return new Issue(`Input should be greater than or equal to ${min}`, "greater_than_equal");
    if (exact > max) return new Issue(`Input should be less than or equal to ${max}`, "less_than_equal");
    return Number(exact);
  };
  return laxType(coerce, "integer").meta({ type: "integer" });
}

/** A number with pydantic's lax coercion; infinities and NaN pass (the chat rules reject them by name). */
export const laxFloat = () => laxType(coerceFloat, "number");
