/**
 * The query language of `docs/api/trace.md#query-language`, in its wire shape: `{"$expr": Operation}` where an
 * operation is a one-key object. The server validates requests into these types; the compiler
 * turns them into SQL.
 */

export type ConvertTarget = "double" | "string" | "int" | "bool" | "exists";

export interface LiteralOperand {
  $literal: unknown;
}

export interface GetFieldOperand {
  $getField: string;
}

export interface ConvertOperand {
  $convert: { input: Operand; to: ConvertTarget };
}

export type Operation =
  | { $and: Operand[] }
  | { $or: Operand[] }
  | { $not: [Operand] }
  | { $eq: [Operand, Operand] }
  | { $gt: [Operand, Operand] }
  | { $gte: [Operand, Operand] }
  | { $lt: [Operand, Operand] }
  | { $lte: [Operand, Operand] }
  | { $in: [Operand, Operand[]] }
  | { $contains: { input: Operand; substr: Operand; case_insensitive?: boolean } };

export type Operand = LiteralOperand | GetFieldOperand | ConvertOperand | Operation;

export interface Query {
  $expr: Operation;
}

export type ComparisonOperator = "$eq" | "$gt" | "$gte" | "$lt" | "$lte";

export interface SortBy {
  field: string;
  direction: "asc" | "desc";
}
