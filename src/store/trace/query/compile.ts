import { sql } from "kysely";
import { canonicalTimestamp } from "../timestamps.js";
import type { Sql, TraceSql } from "../../dialect.js";
import type { ComparisonOperator, ConvertTarget, Operand, Operation } from "./ast.js";
import { QueryError } from "./errors.js";

/**
 * What an operand evaluates to:
 * - `literal`: a constant known here, compared in the form that suits the other side;
 * - `scalar`: a typed SQL column or expression (`timestamp` is canonical timestamp text); `equals`
 *   may give, for some literals, an equivalent condition that indexes serve;
 * - `json`: a JSON leaf, as its text form (see `TraceSql.jsonText`), typed only at run time;
 * - `predicate`: a two-valued SQL condition (the result of an operation).
 */
export type Value =
  | { kind: "literal"; value: unknown }
  | { kind: "scalar"; sql: Sql; type: "string" | "number" | "timestamp"; notNull?: boolean; equals?: (literal: unknown) => Sql | undefined }
  | { kind: "json"; text: Sql }
  | { kind: "predicate"; sql: Sql };

/** Maps a `$getField` name of one table (calls, feedback, costs) to a value; throws QueryError when unknown. */
export type FieldResolver = (field: string) => Value;

/**
 * Compiles the query language to SQL for one table. Comparisons are type tolerant
 * (`docs/api/trace.md#query-language`): a JSON leaf equals a string when its text form does (so 1 = "1" and
 * true = "true"), compares with numbers by the number it spells, and every comparison is two-valued
 * (a missing field compares false, so `$not` of it is true).
 */
export class QueryCompiler {
  constructor(
    private readonly dialect: TraceSql,
    private readonly resolve: FieldResolver,
  ) {}

  predicate(operation: Operation): Sql {
    if ("$and" in operation) return this.junction(operation.$and, "AND");
    if ("$or" in operation) return this.junction(operation.$or, "OR");
    if ("$not" in operation) return sql`(NOT ${this.asPredicate(this.operand(operation.$not[0]))})`;
    if ("$in" in operation)
      return this.inList(
        this.operand(operation.$in[0]),
        operation.$in[1].map((item) => this.operand(item)),
      );
    if ("$contains" in operation) {
      const { input, substr, case_insensitive: caseInsensitive } = operation.$contains;
      return this.contains(this.operand(input), this.operand(substr), caseInsensitive === true);
    }
    for (const op of ["$eq", "$gt", "$gte", "$lt", "$lte"] as const) {
      if (op in operation) {
        const [left, right] = (operation as Record<ComparisonOperator, [Operand, Operand]>)[op];
        return this.compare(op, this.operand(left), this.operand(right));
      }
    }
    throw new QueryError("Unknown query operation");
  }

  operand(operand: Operand): Value {
    if ("$literal" in operand) return { kind: "literal", value: operand.$literal };
    if ("$getField" in operand) return this.resolve(operand.$getField);
    if ("$convert" in operand) return this.convert(this.operand(operand.$convert.input), operand.$convert.to);
    return { kind: "predicate", sql: this.predicate(operand) };
  }

  /** ORDER BY terms for a value: JSON leaves sort numbers first (numerically), then by text; NULLs last. */
  orderTerms(value: Value, direction: "asc" | "desc"): Sql[] {
    const dir = direction === "desc" ? sql`DESC` : sql`ASC`;
    switch (value.kind) {
      case "literal":
        return [];
      case "scalar":
        return [value.notNull ? sql`${value.sql} ${dir}` : sql`${value.sql} ${dir} NULLS LAST`];
      case "json":
        return [sql`${this.dialect.numberOf(value.text)} ${dir} NULLS LAST`, sql`${value.text} ${dir} NULLS LAST`];
      case "predicate":
        return [sql`(CASE WHEN ${value.sql} THEN 1 ELSE 0 END) ${dir}`];
    }
  }

  private junction(operands: Operand[], joiner: "AND" | "OR"): Sql {
    if (operands.length === 0) throw new QueryError(`Empty ${joiner === "AND" ? "$and" : "$or"} operation`);
    const parts = operands.map((operand) => this.asPredicate(this.operand(operand)));
    if (parts.length === 1) return parts[0]!;
    return sql`(${sql.join(parts, sql` ${sql.raw(joiner)} `)})`;
  }

  private asPredicate(value: Value): Sql {
    switch (value.kind) {
      case "predicate":
        return value.sql;
      case "literal":
        return isTruthy(value.value) ? this.dialect.trueValue : this.dialect.falseValue;
      default:
        return this.truthy(value);
    }
  }

  private truthy(value: Value): Sql {
    if (value.kind === "predicate") return value.sql;
    if (value.kind === "literal") return isTruthy(value.value) ? this.dialect.trueValue : this.dialect.falseValue;
    const text = this.textOf(value);
    return this.dialect.orFalse(sql`(${text} = 'true' OR ${this.numberOfValue(value)} <> 0)`);
  }

  private convert(value: Value, to: ConvertTarget): Value {
    if (value.kind === "literal") return { kind: "literal", value: convertLiteral(value.value, to) };
    switch (to) {
      case "double":
        return { kind: "scalar", type: "number", sql: this.numberOfValue(value) };
      case "int":
        return { kind: "scalar", type: "number", sql: sql`CAST(${this.numberOfValue(value)} AS ${sql.raw(this.dialect.dialect === "postgres" ? "bigint" : "INTEGER")})` };
      case "string":
        return { kind: "scalar", type: "string", sql: this.textOf(value) };
      case "bool":
        return { kind: "predicate", sql: this.truthy(value) };
      case "exists":
        return { kind: "predicate", sql: value.kind === "predicate" ? this.dialect.trueValue : sql`(${this.textOf(value)} IS NOT NULL)` };
    }
  }

  private textOf(value: Exclude<Value, { kind: "literal" }>): Sql {
    switch (value.kind) {
      case "json":
        return value.text;
      case "scalar":
        return value.type === "number" ? sql`CAST(${value.sql} AS TEXT)` : value.sql;
      case "predicate":
        return sql`(CASE WHEN ${value.sql} THEN 'true' ELSE 'false' END)`;
    }
  }

  private numberOfValue(value: Exclude<Value, { kind: "literal" }>): Sql {
    switch (value.kind) {
      case "json":
        return this.dialect.numberOf(value.text);
      case "scalar":
        return value.type === "number" ? value.sql : this.dialect.numberOf(value.sql);
      case "predicate":
        return sql`(CASE WHEN ${value.sql} THEN 1 ELSE 0 END)`;
    }
  }

  private compare(op: ComparisonOperator, left: Value, right: Value): Sql {
    if (left.kind === "literal" && right.kind !== "literal") return this.compare(flip(op), right, left);
    if (left.kind === "literal" && right.kind === "literal") {
      return literalCompare(op, left.value, right.value) ? this.dialect.trueValue : this.dialect.falseValue;
    }
    const subject = left as Exclude<Value, { kind: "literal" }>;
    if (right.kind === "literal") {
      if (right.value === null || right.value === undefined) {
        if (op !== "$eq") return this.dialect.falseValue;
        return subject.kind === "predicate" ? this.dialect.falseValue : sql`(${this.textOf(subject)} IS NULL)`;
      }
      const comparison = this.compareToLiteral(op, subject, right.value);
      // A comparison of a never-NULL column needs no COALESCE, which keeps it usable by indexes.
      return subject.kind === "scalar" && subject.notNull ? comparison : this.dialect.orFalse(comparison);
    }
    const other = right as Exclude<Value, { kind: "literal" }>;
    const numeric = (subject.kind === "scalar" && subject.type === "number") || (other.kind === "scalar" && other.type === "number");
    const a = numeric ? this.numberOfValue(subject) : this.textOf(subject);
    const b = numeric ? this.numberOfValue(other) : this.textOf(other);
    return this.dialect.orFalse(sql`(${a} ${sql.raw(SQL_OPERATORS[op])} ${b})`);
  }

  private compareToLiteral(op: ComparisonOperator, subject: Exclude<Value, { kind: "literal" }>, literal: unknown): Sql {
    const operator = sql.raw(SQL_OPERATORS[op]);
    if (subject.kind === "predicate") {
      if (op !== "$eq") return this.dialect.falseValue;
      const wanted = literal === true || literal === "true" ? true : literal === false || literal === "false" ? false : undefined;
      if (wanted === undefined) return this.dialect.falseValue;
      return wanted ? subject.sql : sql`(NOT ${subject.sql})`;
    }
    const equivalent = op === "$eq" && subject.kind === "scalar" ? subject.equals?.(literal) : undefined;
    if (equivalent) return equivalent;
    if (subject.kind === "scalar" && subject.type === "timestamp" && (typeof literal === "string" || typeof literal === "number")) {
      const bound = canonicalTimestamp(literal) ?? String(literal);
      return sql`(${subject.sql} ${operator} ${bound})`;
    }
    if (typeof literal === "number") return sql`(${this.numberOfValue(subject)} ${operator} ${literal})`;
    if (subject.kind === "scalar" && subject.type === "number") {
      const parsed = typeof literal === "string" && /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(literal) ? Number(literal) : undefined;
      return parsed === undefined ? this.dialect.falseValue : sql`(${subject.sql} ${operator} ${parsed})`;
    }
    return sql`(${this.textOf(subject)} ${operator} ${literalText(literal)})`;
  }

  private inList(subject: Value, items: Value[]): Sql {
    if (items.length === 0) return this.dialect.falseValue;
    const allStrings = items.every((item) => item.kind === "literal" && typeof item.value === "string");
    if (allStrings && subject.kind !== "literal" && subject.kind !== "predicate" && !(subject.kind === "scalar" && subject.type !== "string")) {
      const values = items.map((item) => (item as { value: string }).value);
      const test = sql`(${this.textOf(subject)} IN (${sql.join(values)}))`;
      return subject.kind === "scalar" && subject.notNull ? test : this.dialect.orFalse(test);
    }
    const parts = items.map((item) => this.compare("$eq", subject, item));
    return parts.length === 1 ? parts[0]! : sql`(${sql.join(parts, sql` OR `)})`;
  }

  private contains(input: Value, substr: Value, caseInsensitive: boolean): Sql {
    const text = (value: Value): Sql => (value.kind === "literal" ? sql`${literalText(value.value)}` : this.textOf(value));
    let haystack = text(input);
    let needle = text(substr);
    if (caseInsensitive) {
      haystack = sql`lower(${haystack})`;
      needle = sql`lower(${needle})`;
    }
    return this.dialect.orFalse(sql`(${this.dialect.position(needle, haystack)} > 0)`);
  }
}

const SQL_OPERATORS: Record<ComparisonOperator, string> = { $eq: "=", $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" };

function flip(op: ComparisonOperator): ComparisonOperator {
  return ({ $eq: "$eq", $gt: "$lt", $gte: "$lte", $lt: "$gt", $lte: "$gte" } as const)[op];
}

/** The text form a literal compares as: strings as themselves, other JSON as its JSON text. */
function literalText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function isTruthy(value: unknown): boolean {
  return value === true || value === "true" || (typeof value === "number" && value !== 0);
}

function convertLiteral(value: unknown, to: ConvertTarget): unknown {
  switch (to) {
    case "double":
    case "int": {
      const number = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : typeof value === "boolean" ? Number(value) : Number.NaN;
      if (!Number.isFinite(number)) return null;
      return to === "int" ? Math.trunc(number) : number;
    }
    case "string":
      return value === null || value === undefined ? null : literalText(value);
    case "bool":
      return isTruthy(value);
    case "exists":
      return value !== null && value !== undefined;
  }
}

function literalCompare(op: ComparisonOperator, a: unknown, b: unknown): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return op === "$eq" && (a ?? null) === (b ?? null);
  if (typeof a === "number" && typeof b === "number") return compareWith(op, a, b);
  return compareWith(op, literalText(a), literalText(b));
}

function compareWith<T extends number | string>(op: ComparisonOperator, a: T, b: T): boolean {
  switch (op) {
    case "$eq":
      return a === b;
    case "$gt":
      return a > b;
    case "$gte":
      return a >= b;
    case "$lt":
      return a < b;
    case "$lte":
      return a <= b;
  }
}
