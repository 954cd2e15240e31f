import type { ComparisonOperator, Operand, Operation } from "../query/ast.js";
import { QueryError } from "../query/errors.js";
import type { TraceDb } from "../call-tables.js";
import { jsonFieldPath } from "./fields.js";
import { latencyPathKey, numberOverflowKey, numberPathKey } from "./number-leaves.js";
import { type Bounds, callsInIntervals, type ValueInterval } from "./range-index.js";

/**
 * Look-up bounds of rows that are not exact are widened by this much (relative) and by MIN_WIDENING
 * (absolute): a database may read a numeral a unit in the last place differently from JavaScript,
 * or a subnormal one as zero, and the index must still hold every leaf the query's condition can
 * accept. Exact rows (integers below 10^15, and latencies) meet the bounds as written.
 */
const RELATIVE_WIDENING = 1e-12;
const MIN_WIDENING = 1e-300;

const RANGE_OPERATORS = ["$gt", "$gte", "$lt", "$lte"] as const;
type RangeOperator = (typeof RANGE_OPERATORS)[number];
const FLIPPED: Record<RangeOperator, RangeOperator> = { $gt: "$lt", $gte: "$lte", $lt: "$gt", $lte: "$gte" };

const LATENCY_FIELD = "summary.weave.latency_ms";

/** A range conjunct on one JSON path (or the latency), bounds as the query states them. */
interface PathRange extends Bounds {
  field: string;
  /** The JSON column and path; undefined for the latency. */
  column: string | undefined;
  path: string[];
}

/** `field op number` (or `number op field`) on a JSON path the index holds, as a one-sided range. */
function pathRange(operation: Operation): PathRange | undefined {
  for (const op of RANGE_OPERATORS) {
    if (!(op in operation)) continue;
    const [left, right] = (operation as Record<ComparisonOperator, [Operand, Operand]>)[op];
    if ("$getField" in left && "$literal" in right) return fieldRange(left.$getField, op, right.$literal);
    if ("$literal" in left && "$getField" in right) return fieldRange(right.$getField, FLIPPED[op], left.$literal);
    return undefined;
  }
  return undefined;
}

function fieldRange(field: string, op: RangeOperator, literal: unknown): PathRange | undefined {
  // Only a number literal compares as a number; a string compares as text.
  if (typeof literal !== "number" || !Number.isFinite(literal)) return undefined;
  const lower = op === "$gt" || op === "$gte";
  const strict = op === "$gt" || op === "$lt";
  const bounds: Bounds = { low: lower ? literal : undefined, lowStrict: lower && strict, high: lower ? undefined : literal, highStrict: !lower && strict };
  if (field === LATENCY_FIELD) return { field, column: undefined, path: [], ...bounds };
  let json: ReturnType<typeof jsonFieldPath>;
  try {
    json = jsonFieldPath(field);
  } catch (error) {
    // A malformed path is reported by the compiler, with its own message.
    if (error instanceof QueryError) return undefined;
    throw error;
  }
  // Paths through a list (a numeric segment) are not indexed.
  if (!json || json.path.some((segment) => /^-?\d+$/.test(segment))) return undefined;
  return { field, column: json.column, path: json.path, ...bounds };
}

/** Narrows `known` to also meet `range` (a conjunct of the same path); at equal bounds strict wins. */
function intersect(known: Bounds, range: Bounds): void {
  if (range.low !== undefined && (known.low === undefined || range.low > known.low || (range.low === known.low && range.lowStrict))) {
    known.low = range.low;
    known.lowStrict = range.lowStrict;
  }
  if (range.high !== undefined && (known.high === undefined || range.high < known.high || (range.high === known.high && range.highStrict))) {
    known.high = range.high;
    known.highStrict = range.highStrict;
  }
}

function widen(value: number | undefined, direction: -1 | 1): number | undefined {
  if (value === undefined) return undefined;
  const widened = value + direction * (Math.abs(value) * RELATIVE_WIDENING + MIN_WIDENING);
  // Past the double range the bound no longer limits anything.
  return Number.isFinite(widened) ? widened : undefined;
}

/** Widened, inclusive bounds: they meet every value a database may read for a numeral JavaScript reads inside `bounds`. */
function widened(bounds: Bounds): Bounds {
  return { low: widen(bounds.low, -1), lowStrict: false, high: widen(bounds.high, 1), highStrict: false };
}

/**
 * Bounds for exact rows. The literal reaches the database as a number it reads exactly when it is
 * a safe integer; any other bound is widened too (exact rows are integers, so this only matters
 * for a bound a hair's breadth from one).
 */
function exactBounds(bounds: Bounds): Bounds {
  const wide = widened(bounds);
  const lowExact = bounds.low === undefined || Number.isSafeInteger(bounds.low);
  const highExact = bounds.high === undefined || Number.isSafeInteger(bounds.high);
  return {
    low: lowExact ? bounds.low : wide.low,
    lowStrict: lowExact && bounds.lowStrict,
    high: highExact ? bounds.high : wide.high,
    highStrict: highExact && bounds.highStrict,
  };
}

/** Whether a value meets the bounds as the query compares it. */
function meets(value: number, bounds: Bounds): boolean {
  if (bounds.low !== undefined && (bounds.lowStrict ? !(value > bounds.low) : !(value >= bounds.low))) return false;
  if (bounds.high !== undefined && (bounds.highStrict ? !(value < bounds.high) : !(value <= bounds.high))) return false;
  return true;
}

function interval(range: PathRange): ValueInterval | undefined {
  if (range.column === undefined) {
    // The latency: exact rows of ended calls only. A running call's latency is 0, and it has no
    // row, so a range that takes 0 cannot be served.
    if (meets(0, exactBounds(range))) return undefined;
    return { pathKey: latencyPathKey(), overflowKey: undefined, exact: exactBounds(range), widened: undefined };
  }
  return { pathKey: numberPathKey(range.column, range.path), overflowKey: numberOverflowKey(range.column), exact: exactBounds(range), widened: widened(range) };
}

/**
 * The interval sets of the conjuncts of a query that the range index can answer: every call the
 * query matches has a numeric leaf in one interval of each set. Range conjuncts of one path in an
 * `$and` make one interval (`a > 1 AND a < 5`); an `$or` whose branches all have a set makes the
 * union of their first sets. Anything else (including `$not`, and ranges with a string) adds none.
 */
export function indexedIntervalSets(operation: Operation): ValueInterval[][] {
  const conjuncts = "$and" in operation ? operation.$and : [operation];
  const byField = new Map<string, PathRange>();
  const sets: ValueInterval[][] = [];
  for (const operand of conjuncts) {
    if (!isOperation(operand)) continue;
    if ("$and" in operand) {
      sets.push(...indexedIntervalSets(operand));
      continue;
    }
    const range = pathRange(operand);
    if (range) {
      const known = byField.get(range.field);
      if (!known) byField.set(range.field, range);
      else intersect(known, range);
      continue;
    }
    if ("$or" in operand) {
      const union: ValueInterval[] = [];
      for (const branch of operand.$or) {
        const branchSet = isOperation(branch) ? indexedIntervalSets(branch)[0] : undefined;
        if (!branchSet) {
          union.length = 0;
          break;
        }
        union.push(...branchSet);
      }
      if (union.length > 0) sets.push(union);
    }
  }
  const ranges: ValueInterval[][] = [];
  for (const range of byField.values()) {
    const one = interval(range);
    if (one) ranges.push([one]);
  }
  return [...ranges, ...sets];
}

function isOperation(operand: Operand): operand is Operation {
  return !("$literal" in operand) && !("$getField" in operand) && !("$convert" in operand);
}

/**
 * The ids of the calls that may match `operation`, when the range index narrows them to at most
 * `maxCandidates`; undefined when it cannot (no range conjunct on an indexed path, or none
 * selective enough). Like leaf candidates they may include calls the query then rejects.
 */
export async function rangeCandidates(db: TraceDb, projectId: string, operation: Operation, maxCandidates: number): Promise<string[] | undefined> {
  let best: Set<string> | undefined;
  for (const intervals of indexedIntervalSets(operation)) {
    const ids = await callsInIntervals(db, projectId, intervals, best ? Math.min(maxCandidates, best.size) : maxCandidates);
    if (ids && (!best || ids.length < best.size)) best = new Set(ids);
    if (best && best.size === 0) break;
  }
  return best ? [...best] : undefined;
}

/**
 * Some `size` calls that may match `operation`, read from the first range conjunct's look-up; a
 * count that stops at `size - 1` is proven to reach it when all of them match. Undefined when no
 * conjunct has as many index rows.
 */
export async function rangeSample(db: TraceDb, projectId: string, operation: Operation, size: number): Promise<string[] | undefined> {
  for (const intervals of indexedIntervalSets(operation)) {
    const ids = await callsInIntervals(db, projectId, intervals, size, true);
    if (ids && ids.length >= size) return ids;
  }
  return undefined;
}
