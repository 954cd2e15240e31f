import { QueryError } from "./query/errors.js";

/**
 * Time buckets and aggregations shared by `/calls/stats` and `/feedback/stats` (`docs/api/trace.md#calls`,
 * `docs/api/trace.md#feedback`): at most 10 000 buckets over a range of at most 31 days, sized automatically
 * from the range when no granularity is given, aligned in the requested time zone.
 */
export const MAX_STATS_RANGE_DAYS = 31;
const MAX_BUCKETS = 10_000;

export type Aggregation = "sum" | "avg" | "min" | "max" | "count" | "count_true" | "count_false";

export interface MetricSpec {
  metric: string;
  aggregations: Aggregation[];
  percentiles: number[];
}

function autoGranularity(seconds: number): number {
  if (seconds <= 2 * 3600) return 300;
  if (seconds <= 12 * 3600) return 3600;
  if (seconds <= 3 * 86400) return 6 * 3600;
  if (seconds <= 14 * 86400) return 12 * 3600;
  return 86400;
}

/** Offset of `timeZone` from UTC at `ms`, in milliseconds. */
function zoneOffsetMs(timeZone: string, ms: number): number {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" }).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value);
  const local = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return local - Math.floor(ms / 1000) * 1000;
}

export interface BucketRange {
  startMs: number;
  endMs: number;
  granularity: number;
  /** Bucket start times, ascending; every bucket starts before endMs. */
  bucketStarts: number[];
  timeZone: string;
}

export function bucketRange(startMs: number, endMs: number, granularity: number | null | undefined, timeZone: string): BucketRange {
  if (endMs < startMs) throw new QueryError("end must be after start");
  if (endMs - startMs > MAX_STATS_RANGE_DAYS * 86_400_000) throw new QueryError(`date range cannot exceed ${MAX_STATS_RANGE_DAYS} days`);
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
  } catch {
    throw new QueryError(`Unknown time zone '${timeZone}'`);
  }
  const rangeSeconds = (endMs - startMs) / 1000;
  let size = granularity ?? autoGranularity(rangeSeconds);
  if (rangeSeconds / size > MAX_BUCKETS) size = Math.max(size, Math.floor(rangeSeconds / MAX_BUCKETS) + 1);
  const sizeMs = size * 1000;
  const offset = zoneOffsetMs(timeZone, startMs);
  const first = Math.floor((startMs + offset) / sizeMs) * sizeMs - offset;
  const bucketStarts: number[] = [];
  for (let at = first; at < endMs; at += sizeMs) bucketStarts.push(at);
  return { startMs, endMs, granularity: size, bucketStarts, timeZone };
}

/** Index of the bucket holding `ms`, or -1 outside the range. */
export function bucketIndex(range: BucketRange, ms: number): number {
  if (ms < range.startMs || ms >= range.endMs || range.bucketStarts.length === 0) return -1;
  return Math.min(range.bucketStarts.length - 1, Math.floor((ms - range.bucketStarts[0]!) / (range.granularity * 1000)));
}

/** Linear interpolation between closest ranks. */
function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

export function percentileKey(p: number, metric: string): string {
  return `p${String(p)}_${metric}`;
}

/**
 * `<aggregation>_<metric>` and `p<N>_<metric>` values of one bucket. NULLs are skipped; sums, counts
 * and averages of an empty bucket are 0, minimums, maximums and percentiles null.
 */
export function aggregate(values: (number | null)[], spec: MetricSpec, name = spec.metric): Record<string, number | null> {
  const present = values.filter((value): value is number => value !== null && Number.isFinite(value));
  const out: Record<string, number | null> = {};
  const sum = present.reduce((total, value) => total + value, 0);
  for (const aggregation of spec.aggregations) {
    const key = `${aggregation}_${name}`;
    switch (aggregation) {
      case "sum":
        out[key] = sum;
        break;
      case "avg":
        out[key] = present.length > 0 ? sum / present.length : 0;
        break;
      case "min":
        out[key] = present.length > 0 ? present.reduce((a, b) => (b < a ? b : a)) : null;
        break;
      case "max":
        out[key] = present.length > 0 ? present.reduce((a, b) => (b > a ? b : a)) : null;
        break;
      case "count":
        out[key] = present.length;
        break;
      case "count_true":
        out[key] = present.filter((value) => value === 1).length;
        break;
      case "count_false":
        out[key] = present.filter((value) => value === 0).length;
        break;
    }
  }
  if (spec.percentiles.length > 0) {
    const sorted = [...present].sort((a, b) => a - b);
    for (const p of spec.percentiles) out[percentileKey(p, name)] = percentile(sorted, p);
  }
  return out;
}
