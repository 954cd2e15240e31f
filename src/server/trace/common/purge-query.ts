import type { Operand, Operation } from "../../../store/trace/query/ast.js";
import { ApiError } from "../../errors.js";

const isIdField = (operand: Operand) => "$getField" in operand && operand.$getField === "id";
const literalString = (operand: Operand): string | undefined => ("$literal" in operand && typeof operand.$literal === "string" ? operand.$literal : undefined);

function idsOfEq(operation: Operand): string[] | undefined {
  if (!("$eq" in operation)) return undefined;
  const [left, right] = operation.$eq;
  const id = isIdField(left) ? literalString(right) : isIdField(right) ? literalString(left) : undefined;
  return id === undefined ? undefined : [id];
}

/**
 * The ids named by a purge query: `$eq [id, literal]`, an `$or` of those, and (when allowed)
 * `$in [id, [literals]]`. Anything else is refused, so a purge never deletes by accident.
 */
export function purgeIds(operation: Operation, message: string, allowIn: boolean): string[] {
  const eq = idsOfEq(operation);
  if (eq) return eq;
  if ("$or" in operation && operation.$or.length > 0) {
    const ids = operation.$or.map(idsOfEq);
    if (ids.every((list) => list !== undefined)) return ids.flat() as string[];
  }
  if (allowIn && "$in" in operation && isIdField(operation.$in[0])) {
    const ids = operation.$in[1].map(literalString);
    if (ids.every((id) => id !== undefined)) return ids as string[];
  }
  throw new ApiError(400, message);
}
