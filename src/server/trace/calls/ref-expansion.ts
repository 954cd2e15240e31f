import type { CallSchema } from "../../../store/trace/calls/types.js";
import type { RefReader } from "../../../trace/refs-reader.js";

/** Refs that expand to values: objects and ops (with or without a path into them) and tables or table rows. */
const EXPANDABLE_REF = /^weave:\/\/\/[^/]+\/[^/]+\/(object|op|table)\//;

function getPath(root: Record<string, unknown>, path: string[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (current === null || typeof current !== "object" || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function setPath(root: Record<string, unknown>, path: string[], value: unknown): void {
  let current = root;
  for (const key of path.slice(0, -1)) {
    const next = current[key];
    if (next === null || typeof next !== "object" || Array.isArray(next)) current[key] = {};
    current = current[key] as Record<string, unknown>;
  }
  current[path[path.length - 1]!] = value;
}

/**
 * `expand_columns` (`docs/api/trace.md#calls`): each dotted path (shallowest first) whose value is an
 * object, op or table ref is replaced by the referenced value, with the ref kept under
 * `<path>._ref` when that value is an object. Expanding a shallow path can reveal refs for a deeper
 * one (`inputs.model`, then `inputs.model.prompt`). Refs of one depth are read in one batch for the
 * whole page; a ref that cannot be resolved stays as it is, a deleted object reads as null.
 */
export async function expandColumns(projectId: string, calls: CallSchema[], columns: string[], reader: RefReader): Promise<void> {
  const paths = [...new Set(columns)].map((column) => column.split(".")).filter((path) => path.every((part) => part.length > 0));
  paths.sort((a, b) => a.length - b.length);
  for (const path of paths) {
    const targets: { call: Record<string, unknown>; ref: string }[] = [];
    for (const call of calls) {
      const value = getPath(call as unknown as Record<string, unknown>, path);
      if (typeof value === "string" && EXPANDABLE_REF.test(value)) targets.push({ call: call as unknown as Record<string, unknown>, ref: value });
    }
    if (targets.length === 0) continue;
    const refs = [...new Set(targets.map((target) => target.ref))];
    const values = await reader.tryReadBatch(projectId.split("/")[0]!, refs);
    const byRef = new Map(refs.map((ref, index) => [ref, values[index]]));
    for (const { call, ref } of targets) {
      const value = byRef.get(ref);
      if (value === undefined) continue;
      if (value !== null && typeof value === "object" && !Array.isArray(value)) setPath(call, path, { ...(value as Record<string, unknown>), _ref: ref });
      else setPath(call, path, value);
    }
  }
}
