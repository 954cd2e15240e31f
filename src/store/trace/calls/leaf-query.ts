import type { Operand, Operation } from "../query/ast.js";
import { QueryError } from "../query/errors.js";
import type { DialectName } from "../../db.js";
import type { TraceDb } from "../call-tables.js";
import { jsonFieldPath } from "./fields.js";
import { callsWithKeys } from "./leaf-index.js";
import { literalKeys } from "./leaf-keys.js";

/**
 * Above this many candidate calls a query reads the calls in its index order instead: the filter is
 * not selective, and reading the calls that way finds a page of matches sooner than fetching every
 * candidate. A query that must see every match (a count, no limit) gains from candidates up to a
 * much larger number than one that stops after a page.
 */
export const MAX_CANDIDATES_FOR_PAGE = 2000;
export const MAX_CANDIDATES = 10_000;
/** Queries that stop after this many matches count as reading a page. */
const PAGE_LIMIT = 1000;

/** How many candidates a query that stops after `limit` matches (undefined: all) should take at most. */
export function candidateLimit(limit: number | null | undefined): number {
  return limit !== null && limit !== undefined && limit <= PAGE_LIMIT ? MAX_CANDIDATES_FOR_PAGE : MAX_CANDIDATES;
}

/**
 * The key sets of the conjuncts of a query that the leaf index can answer: every call the query
 * matches has at least one key of each set. Conjuncts are `$eq` of a JSON path and a literal,
 * `$in` of a JSON path and literals, and `$or`s of those; anything else (including `$not`) adds no set.
 */
export function indexedKeySets(projectId: string, operation: Operation): number[][] {
  if ("$and" in operation) return operation.$and.flatMap((operand) => (isOperation(operand) ? indexedKeySets(projectId, operand) : []));
  const keys = matchKeys(projectId, operation);
  return keys ? [keys] : [];
}

/** The keys one of which every call matching `operation` has, or undefined when unknown. */
function matchKeys(projectId: string, operation: Operation): number[] | undefined {
  if ("$or" in operation) {
    const keys = new Set<number>();
    for (const operand of operation.$or) {
      // A branch is covered by any one of its key sets.
      const branch = isOperation(operand) ? indexedKeySets(projectId, operand)[0] : undefined;
      if (!branch) return undefined;
      for (const key of branch) keys.add(key);
    }
    return [...keys];
  }
  if ("$eq" in operation) {
    const [left, right] = operation.$eq;
    if ("$getField" in left && "$literal" in right) return fieldKeys(projectId, left.$getField, [right.$literal]);
    if ("$literal" in left && "$getField" in right) return fieldKeys(projectId, right.$getField, [left.$literal]);
    return undefined;
  }
  if ("$in" in operation) {
    const [subject, items] = operation.$in;
    if (!("$getField" in subject) || items.length === 0 || !items.every((item) => "$literal" in item)) return undefined;
    return fieldKeys(
      projectId,
      subject.$getField,
      items.map((item) => (item as { $literal: unknown }).$literal),
    );
  }
  return undefined;
}

function fieldKeys(projectId: string, field: string, literals: unknown[]): number[] | undefined {
  let json: ReturnType<typeof jsonFieldPath>;
  try {
    json = jsonFieldPath(field);
  } catch (error) {
    // A malformed path is reported by the compiler, with its own message.
    if (error instanceof QueryError) return undefined;
    throw error;
  }
  if (!json) return undefined;
  const keys = new Set<number>();
  for (const literal of literals) {
    const literalSet = literalKeys(projectId, json.column, json.path, literal);
    if (!literalSet) return undefined;
    for (const key of literalSet) keys.add(key);
  }
  return [...keys];
}

function isOperation(operand: Operand): operand is Operation {
  return !("$literal" in operand) && !("$getField" in operand) && !("$convert" in operand);
}

/**
 * The ids of the calls that may match `operation`, when the leaf index narrows them to at most
 * `maxCandidates`; undefined when it cannot (no indexed conjunct, or none selective enough). Ids of
 * deleted calls or of other matches of a hash may be among them: the query's conditions decide.
 */
export async function leafCandidates(db: TraceDb, dialect: DialectName, projectId: string, operation: Operation, maxCandidates = MAX_CANDIDATES): Promise<string[] | undefined> {
  let best: Set<string> | undefined;
  for (const keys of indexedKeySets(projectId, operation).sort((a, b) => a.length - b.length)) {
    const ids = await callsWithKeys(db, dialect, keys, maxCandidates);
    if (ids && (!best || ids.length < best.size)) best = new Set(ids);
    if (best && best.size === 0) break;
  }
  return best ? [...best] : undefined;
}
