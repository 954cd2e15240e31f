import { compareByCodePoint } from "../../../python-format.js";
import { isJsonObject } from "../object-class.js";
import type { ComparisonOperator, Operand, Operation } from "./ast.js";
import { QueryError } from "./errors.js";

/**
 * Evaluates the query language (`docs/api/trace.md#query-language`) on an in-memory value, with the rules the SQL
 * compiler follows for calls (docs/decisions/trace.md#D-TRACE-020): `$getField` reads a dotted path
 * (numeric segments index lists; missing is null), a JSON leaf equals a string when its text form
 * does, a number literal compares with the number a leaf spells, strings compare bytewise, and a
 * comparison with a missing side is false. Used where rows are built in memory (eval results).
 */
export function matchesQuery(operation: Operation, root: unknown): boolean {
  return truthy(evaluate(operation, root));
}

function evaluate(operand: Operand, root: unknown): unknown {
  if ("$literal" in operand) return operand.$literal;
  if ("$getField" in operand) return fieldOf(root, operand.$getField);
  if ("$convert" in operand) return convert(evaluate(operand.$convert.input, root), operand.$convert.to);
  if ("$and" in operand) {
    if (operand.$and.length === 0) throw new QueryError("$and needs at least one operand");
    return operand.$and.every((item) => truthy(evaluate(item, root)));
  }
  if ("$or" in operand) {
    if (operand.$or.length === 0) throw new QueryError("$or needs at least one operand");
    return operand.$or.some((item) => truthy(evaluate(item, root)));
  }
  if ("$not" in operand) return !truthy(evaluate(operand.$not[0], root));
  if ("$in" in operand) {
    const left = evaluate(operand.$in[0], root);
    return operand.$in[1].some((item) => compare("$eq", left, evaluate(item, root)));
  }
  if ("$contains" in operand) {
    const input = textOf(evaluate(operand.$contains.input, root));
    const substr = textOf(evaluate(operand.$contains.substr, root));
    if (input === undefined || substr === undefined) return false;
    return operand.$contains.case_insensitive ? input.toLowerCase().includes(substr.toLowerCase()) : input.includes(substr);
  }
  for (const op of ["$eq", "$gt", "$gte", "$lt", "$lte"] as const) {
    if (op in operand) {
      const [left, right] = (operand as Record<ComparisonOperator, [Operand, Operand]>)[op];
      return compare(op, evaluate(left, root), evaluate(right, root));
    }
  }
  throw new QueryError(`Unknown operation ${Object.keys(operand).join(", ")}`);
}

export function fieldOf(root: unknown, path: string): unknown {
  let current = root;
  for (const part of path.split(".")) {
    if (Array.isArray(current) && /^-?[0-9]+$/.test(part)) current = current[Number(part) < 0 ? current.length + Number(part) : Number(part)];
    else if (isJsonObject(current)) current = current[part];
    else return null;
  }
  return current === undefined ? null : current;
}

const truthy = (value: unknown) => value === true;

function textOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/** The number a value spells: a JSON number or a numeric string. */
function numberOf(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

function convert(value: unknown, to: string): unknown {
  switch (to) {
    case "double":
      return numberOf(value) ?? null;
    case "int": {
      const number = numberOf(value);
      return number === undefined ? null : Math.trunc(number);
    }
    case "string":
      return textOf(value) ?? null;
    case "bool":
      if (value === null || value === undefined) return null;
      return value === true || value === "true" || (typeof value === "number" && value !== 0);
    default:
      return value !== null && value !== undefined;
  }
}

function compare(op: ComparisonOperator, left: unknown, right: unknown): boolean {
  if (op === "$eq" && (left === null || right === null)) return left === right;
  if (left === null || left === undefined || right === null || right === undefined) return false;
  let order: number | undefined;
  if (typeof left === "number" || typeof right === "number") {
    const a = numberOf(left);
    const b = numberOf(right);
    if (a !== undefined && b !== undefined) order = a < b ? -1 : a > b ? 1 : 0;
  }
  if (order === undefined) {
    if (op === "$eq") return JSON.stringify(left) === JSON.stringify(right) || (textOf(left) === textOf(right) && (typeof left === "string" || typeof right === "string"));
    if (typeof left !== "string" || typeof right !== "string") return false;
    order = Math.sign(compareByCodePoint(left, right));
  }
  switch (op) {
    case "$eq":
      return order === 0;
    case "$gt":
      return order > 0;
    case "$gte":
      return order >= 0;
    case "$lt":
      return order < 0;
    default:
      return order <= 0;
  }
}
