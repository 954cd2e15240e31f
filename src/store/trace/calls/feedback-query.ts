import { sql } from "kysely";
import type { Operand, Operation } from "../query/ast.js";
import type { TraceDb } from "../call-tables.js";

const FEEDBACK_FIELD = /^feedback\.\[([^\]]+)\]\./;

/**
 * The feedback types that every call the query matches has feedback of: from conjuncts that compare
 * a `feedback.[type].…` field with non-null literals (`$eq`, `$in`, ranges, `$contains`). Such a
 * field reads the call's newest feedback of that type, and its comparisons are false when there is
 * none, so only calls with feedback of the type can match. `$or`, `$not` and comparisons with null
 * add nothing.
 */
export function requiredFeedbackTypes(operation: Operation): string[] {
  if ("$and" in operation) return operation.$and.flatMap((operand) => (isOperation(operand) ? requiredFeedbackTypes(operand) : []));
  if ("$in" in operation) {
    const [subject, items] = operation.$in;
    return items.length > 0 && items.every(isNonNullLiteral) ? feedbackType(subject) : [];
  }
  if ("$contains" in operation) return isNonNullLiteral(operation.$contains.substr) ? feedbackType(operation.$contains.input) : [];
  for (const op of ["$eq", "$gt", "$gte", "$lt", "$lte"] as const) {
    if (op in operation) {
      const [left, right] = (operation as Record<typeof op, [Operand, Operand]>)[op];
      if (isNonNullLiteral(right)) return feedbackType(left);
      if (isNonNullLiteral(left)) return feedbackType(right);
    }
  }
  return [];
}

function feedbackType(operand: Operand): string[] {
  if (!("$getField" in operand)) return [];
  const match = FEEDBACK_FIELD.exec(operand.$getField);
  return match ? [match[1]!] : [];
}

function isNonNullLiteral(operand: Operand): boolean {
  return "$literal" in operand && operand.$literal !== null && operand.$literal !== undefined;
}

function isOperation(operand: Operand): operand is Operation {
  return !("$literal" in operand) && !("$getField" in operand) && !("$convert" in operand);
}

/**
 * The ids of the calls of `projectId` that have feedback of every type the query requires (at
 * least, of the rarest), when there are at most `maxCandidates`; undefined when the query requires
 * none or more calls have it.
 */
export async function feedbackCandidates(db: TraceDb, projectId: string, operation: Operation, maxCandidates: number): Promise<string[] | undefined> {
  const prefix = `weave:///${projectId}/call/`;
  let best: string[] | undefined;
  for (const type of new Set(requiredFeedbackTypes(operation))) {
    const rows = (
      await sql<{
        weave_ref: string;
      }>`SELECT DISTINCT weave_ref FROM trace_feedback WHERE project_id = ${projectId} AND feedback_type = ${type} AND substr(weave_ref, 1, ${prefix.length}) = ${prefix} LIMIT ${maxCandidates + 1}`.execute(db)
    ).rows;
    if (rows.length > maxCandidates) continue;
    if (!best || rows.length < best.length) best = rows.map((row) => row.weave_ref.slice(prefix.length));
    if (best.length === 0) break;
  }
  return best;
}
