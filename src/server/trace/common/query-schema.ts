import { z } from "zod";
import { isJsonObject } from "../../../store/trace/object-class.js";
import type { ConvertTarget, Operand, Operation, Query } from "../../../store/trace/query/ast.js";

/**
 * Validation of the query language (`docs/api/trace.md#query-language`). The grammar is recursive and every
 * operation is a one-key object, so it is checked by hand: a zod union would accept
 * `{"$eq": ...}` as a `$literal` operand with the key missing. Problems are 422 items whose `loc`
 * points into the expression.
 */
class ShapeError extends Error {
  constructor(
    message: string,
    readonly path: (string | number)[],
  ) {
    super(message);
  }
}

const OPERATIONS = ["$and", "$or", "$not", "$eq", "$gt", "$gte", "$lt", "$lte", "$in", "$contains"] as const;
const CONVERT_TARGETS: ConvertTarget[] = ["double", "string", "int", "bool", "exists"];
const MAX_DEPTH = 64;
/**
 * Terms of one `$and`/`$or` and literals of one `$in`: SQLite refuses far larger expressions (its
 * expression-tree and variable limits) and PostgreSQL plans them slowly, so one cap for both.
 */
export const MAX_QUERY_LIST = 1000;

function list(value: unknown, path: (string | number)[], length?: number): unknown[] {
  if (!Array.isArray(value)) throw new ShapeError("Input should be a valid list", path);
  if (value.length > MAX_QUERY_LIST) throw new ShapeError(`List should have at most ${MAX_QUERY_LIST} items, not ${value.length}`, path);
  if (length !== undefined && value.length !== length) throw new ShapeError(`List should have exactly ${length} item${length === 1 ? "" : "s"}`, path);
  return value;
}

function operation(value: unknown, path: (string | number)[], depth: number): Operation {
  if (depth > MAX_DEPTH) throw new ShapeError(`Query nesting is deeper than ${MAX_DEPTH}`, path);
  if (!isJsonObject(value)) throw new ShapeError("Input should be a valid dictionary", path);
  const keys = OPERATIONS.filter((key) => key in value);
  if (keys.length !== 1) throw new ShapeError(`Expected exactly one of ${OPERATIONS.join(", ")}`, path);
  const key = keys[0]!;
  const at = [...path, key];
  const arg = value[key];
  switch (key) {
    case "$and":
    case "$or":
      return { [key]: list(arg, at).map((item, index) => operand(item, [...at, index], depth + 1)) } as Operation;
    case "$not":
      return { $not: [operand(list(arg, at, 1)[0], [...at, 0], depth + 1)] };
    case "$in": {
      const [left, right] = list(arg, at, 2);
      return { $in: [operand(left, [...at, 0], depth + 1), list(right, [...at, 1]).map((item, index) => operand(item, [...at, 1, index], depth + 1))] };
    }
    case "$contains": {
      if (!isJsonObject(arg)) throw new ShapeError("Input should be a valid dictionary", at);
      if (arg.case_insensitive !== undefined && arg.case_insensitive !== null && typeof arg.case_insensitive !== "boolean") {
        throw new ShapeError("Input should be a valid boolean", [...at, "case_insensitive"]);
      }
      return {
        $contains: {
          input: operand(arg.input, [...at, "input"], depth + 1),
          substr: operand(arg.substr, [...at, "substr"], depth + 1),
          case_insensitive: arg.case_insensitive === true,
        },
      };
    }
    default: {
      const [left, right] = list(arg, at, 2);
      return { [key]: [operand(left, [...at, 0], depth + 1), operand(right, [...at, 1], depth + 1)] } as Operation;
    }
  }
}

function operand(value: unknown, path: (string | number)[], depth: number): Operand {
  if (isJsonObject(value)) {
    if ("$literal" in value) return { $literal: value.$literal };
    if ("$getField" in value) {
      if (typeof value.$getField !== "string") throw new ShapeError("Input should be a valid string", [...path, "$getField"]);
      return { $getField: value.$getField };
    }
    if ("$convert" in value) {
      const convert = value.$convert;
      if (!isJsonObject(convert)) throw new ShapeError("Input should be a valid dictionary", [...path, "$convert"]);
      if (!CONVERT_TARGETS.includes(convert.to as ConvertTarget)) {
        throw new ShapeError(`Input should be ${CONVERT_TARGETS.map((target) => `'${target}'`).join(", ")}`, [...path, "$convert", "to"]);
      }
      return { $convert: { input: operand(convert.input, [...path, "$convert", "input"], depth + 1), to: convert.to as ConvertTarget } };
    }
  }
  return operation(value, path, depth);
}

/** Parses `{"$expr": operation}`; throws a ShapeError naming the faulty place. */
export function parseQuery(value: unknown): Query {
  if (!isJsonObject(value)) throw new ShapeError("Input should be a valid dictionary", []);
  if (!("$expr" in value)) throw new ShapeError("Field required", ["$expr"]);
  return { $expr: operation(value.$expr, ["$expr"], 0) };
}

/** The `query` field of a request body. */
export const zQuery = z
  .record(z.string(), z.unknown())
  .transform((value, ctx): Query => {
    try {
      return parseQuery(value);
    } catch (error) {
      if (!(error instanceof ShapeError)) throw error;
      ctx.addIssue({ code: "custom", message: error.message, path: error.path, input: value });
      return z.NEVER;
    }
  })
  .describe('Query expression: {"$expr": operation} (docs/api/trace.md#query-language)');
