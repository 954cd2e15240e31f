import type { Operand, Operation } from "../query/ast.js";
import type { DialectName } from "../../db.js";
import type { TraceDb } from "../call-tables.js";
import { callsWithText, searchableNeedle } from "./text-index.js";
import type { TrigramSamples } from "./trigram-sample.js";

/** Fields whose text the text index holds: `$contains` on them (or on paths inside inputs/output) can use it. */
const TEXT_FIELDS = new Set(["op_name", "display_name", "summary.weave.display_name", "summary.weave.trace_name", "inputs", "output"]);

function indexedField(field: string): boolean {
  if (TEXT_FIELDS.has(field)) return true;
  const column = field.split(".")[0]!;
  // Malformed paths (empty segments) are the compiler's to report.
  return (column === "inputs" || column === "output") && !field.split(".").some((segment) => segment.length === 0);
}

/**
 * The needle sets of the conjuncts of a query that the text index can answer: every call the
 * query matches has a document containing (case folded) one needle of each set. Conjuncts are
 * `$contains` of an indexed field and a string literal the index can search for, and `$or`s of
 * those; anything else (including `$not`) adds no set.
 */
export function indexedNeedleSets(dialect: DialectName, operation: Operation): string[][] {
  if ("$and" in operation) return operation.$and.flatMap((operand) => (isOperation(operand) ? indexedNeedleSets(dialect, operand) : []));
  const needles = matchNeedles(dialect, operation);
  return needles ? [needles] : [];
}

function matchNeedles(dialect: DialectName, operation: Operation): string[] | undefined {
  if ("$or" in operation) {
    const needles = new Set<string>();
    for (const operand of operation.$or) {
      // A branch is covered by any one of its needle sets.
      const branch = isOperation(operand) ? indexedNeedleSets(dialect, operand)[0] : undefined;
      if (!branch) return undefined;
      for (const needle of branch) needles.add(needle);
    }
    return [...needles];
  }
  if ("$contains" in operation) {
    const { input, substr } = operation.$contains;
    if (!("$getField" in input) || !indexedField(input.$getField)) return undefined;
    if (!("$literal" in substr) || typeof substr.$literal !== "string" || !searchableNeedle(dialect, substr.$literal)) return undefined;
    return [substr.$literal];
  }
  return undefined;
}

function isOperation(operand: Operand): operand is Operation {
  return !("$literal" in operand) && !("$getField" in operand) && !("$convert" in operand);
}

/**
 * The ids of the calls that may match `operation`, when the text index narrows them to at most
 * `maxCandidates`; undefined when it cannot. Like leaf candidates, they may include calls the query
 * then rejects. With `samples` (PostgreSQL), a long needle is looked up by its rarest part.
 */
export async function textCandidates(db: TraceDb, dialect: DialectName, projectId: string, operation: Operation, maxCandidates: number, samples?: TrigramSamples): Promise<string[] | undefined> {
  let best: Set<string> | undefined;
  const searchPart = samples ? (needle: string) => samples.searchPart(projectId, needle) : undefined;
  for (const needles of indexedNeedleSets(dialect, operation)) {
    const ids = await callsWithText(db, dialect, projectId, needles, maxCandidates, searchPart);
    if (ids && (!best || ids.length < best.size)) best = new Set(ids);
    if (best && best.size === 0) break;
  }
  return best ? [...best] : undefined;
}
