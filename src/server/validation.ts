import type { z } from "zod";

/** One item of the 422 body (`docs/api/overview.md#errors`): where, what, and a machine-readable kind. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export type InputLocation = "body" | "query" | "path" | "header";

/** A request the schema rejects; rendered as 422 `{"detail": [...]}` on every surface. */
export class RequestValidationError extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((issue) => `${issue.loc.join(".")}: ${issue.msg}`).join("; "));
  }

  static single(loc: (string | number)[], msg: string, type = "value_error"): RequestValidationError {
    return new RequestValidationError([{ loc, msg, type }]);
  }
}

/**
 * Parses `value` or throws a RequestValidationError whose `loc`s start with `location`. Valid input
 * is parsed once, without `reportInput` (which takes zod off its compiled fast path and doubles the
 * cost of large bodies); only invalid input is parsed again to learn the offending values.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: InputLocation): z.output<S> {
  const fast = schema.safeParse(value);
  if (fast.success) return fast.data;
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw new RequestValidationError(result.error.issues.flatMap((issue) => toValidationIssues(issue, location)));
}

/**
 * Like `toValidationIssue`, but a union whose value has the type of exactly one member reports that
 * member's own problems (e.g. a list that is too long) instead of a bare "matches no member".
 */
export function toValidationIssues(issue: ZodIssue, location: InputLocation): ValidationIssue[] {
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const plausible = issue.errors.filter((branch) => !branch.some((inner) => inner.path.length === 0 && (inner.code === "invalid_type" || inner.code === "invalid_value")));
    if (plausible.length === 1) {
      return plausible[0]!.flatMap((inner) => toValidationIssues({ ...inner, path: [...issue.path, ...inner.path] } as ZodIssue, location));
    }
  }
  return [toValidationIssue(issue, location)];
}

type ZodIssue = z.core.$ZodIssue & { input?: unknown };

/** Pydantic-style messages and type names, which clients of vLLM and FastAPI services match on. */
export function toValidationIssue(issue: ZodIssue, location: InputLocation): ValidationIssue {
  const loc = [location, ...issue.path.map((part) => (typeof part === "symbol" ? String(part) : part))];
  switch (issue.code) {
    case "invalid_type": {
      if (issue.input === undefined) return { loc, msg: "Field required", type: "missing" };
      return { loc, ...describeExpectedType(String(issue.expected)) };
    }
    case "too_small":
      return { loc, ...describeBound(issue.origin, "min", issue.minimum, issue.inclusive ?? true) };
    case "too_big":
      return { loc, ...describeBound(issue.origin, "max", issue.maximum, issue.inclusive ?? true) };
    case "invalid_value": {
      const options = issue.values.map((value) => JSON.stringify(value).replaceAll('"', "'"));
      const list = options.length <= 1 ? options.join("") : `${options.slice(0, -1).join(", ")} or ${options[options.length - 1]}`;
      return { loc, msg: `Input should be ${list}`, type: "literal_error" };
    }
    case "invalid_format":
      if (issue.format === "uuid") return { loc, msg: "Input should be a valid UUID", type: "uuid_parsing" };
      if (issue.format === "regex") return { loc, msg: `String should match pattern '${issue.pattern ?? ""}'`, type: "string_pattern_mismatch" };
      return { loc, msg: `Input should be a valid ${issue.format}`, type: `${issue.format}_parsing` };
    case "invalid_union":
      return { loc, msg: "Input does not match any of the allowed types", type: "union_tag_invalid" };
    case "not_multiple_of":
      return { loc, msg: `Input should be a multiple of ${String(issue.divisor)}`, type: "multiple_of" };
    case "custom": {
      // Custom checks may name their pydantic type in `params.type` (e.g. `int_from_float`).
      const type = (issue.params as { type?: unknown } | undefined)?.type;
      return { loc, msg: issue.message, type: typeof type === "string" ? type : "value_error" };
    }
    default:
      return { loc, msg: issue.message, type: "value_error" };
  }
}

function describeExpectedType(expected: string): { msg: string; type: string } {
  switch (expected) {
    case "string":
      return { msg: "Input should be a valid string", type: "string_type" };
    case "int":
      return { msg: "Input should be a valid integer", type: "int_type" };
    case "number":
      return { msg: "Input should be a valid number", type: "float_type" };
    case "boolean":
      return { msg: "Input should be a valid boolean", type: "bool_type" };
    case "array":
      return { msg: "Input should be a valid list", type: "list_type" };
    case "object":
    case "record":
      return { msg: "Input should be a valid dictionary", type: "dict_type" };
    case "null":
      return { msg: "Input should be None", type: "none_required" };
    default:
      return { msg: `Input should be a valid ${expected}`, type: `${expected}_type` };
  }
}

function describeBound(origin: string, side: "min" | "max", bound: unknown, inclusive: boolean): { msg: string; type: string } {
  const value = String(bound);
  if (origin === "string") {
    return side === "min" ? { msg: `String should have at least ${value} characters`, type: "string_too_short" } : { msg: `String should have at most ${value} characters`, type: "string_too_long" };
  }
  if (origin === "array" || origin === "set") {
    return side === "min" ? { msg: `List should have at least ${value} items`, type: "too_short" } : { msg: `List should have at most ${value} items`, type: "too_long" };
  }
  if (side === "min") {
    return inclusive ? { msg: `Input should be greater than or equal to ${value}`, type: "greater_than_equal" } : { msg: `Input should be greater than ${value}`, type: "greater_than" };
  }
  return inclusive ? { msg: `Input should be less than or equal to ${value}`, type: "less_than_equal" } : { msg: `Input should be less than ${value}`, type: "less_than" };
}
