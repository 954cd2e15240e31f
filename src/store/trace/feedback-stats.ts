import { type Aggregation, aggregate, bucketIndex, bucketRange, type MetricSpec } from "./buckets.js";
import { QueryError } from "./query/errors.js";
import { formatTimestamp, parseTimestamp } from "./timestamps.js";

export type FeedbackValueType = "numeric" | "boolean" | "categorical";

export interface FeedbackMetric {
  json_path: string;
  value_type: FeedbackValueType;
  aggregations: Aggregation[];
  percentiles: number[];
}

/** Payload paths are dotted names of letters, digits, `_` and spaces (as Weave allows). */
export const JSON_PATH_PATTERN = /^[a-zA-Z0-9_. ]+$/;

const DEFAULT_AGGREGATIONS: Record<FeedbackValueType, Aggregation[]> = {
  numeric: ["avg", "min", "max"],
  boolean: ["count_true", "count_false"],
  categorical: ["count"],
};

export function defaultAggregations(type: FeedbackValueType): Aggregation[] {
  return DEFAULT_AGGREGATIONS[type];
}

/** `output.score` → `output_score`: the name a metric takes in bucket keys. */
export function metricSlug(jsonPath: string): string {
  if (!jsonPath.trim() || !JSON_PATH_PATTERN.test(jsonPath)) throw new QueryError(`json_path may only contain [a-zA-Z0-9_. ], got: '${jsonPath}'`);
  return jsonPath.trim().replace(/[. ]/g, "_");
}

function valueAt(payload: unknown, jsonPath: string): unknown {
  let current = payload;
  for (const key of jsonPath.trim().split(".")) {
    if (current === null || typeof current !== "object" || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** A payload value as a metric input: numbers (and numeric strings), booleans as 1/0, categories as present (1). */
function metricValue(value: unknown, type: FeedbackValueType): number | null {
  if (type === "boolean") return value === true ? 1 : value === false ? 0 : null;
  if (type === "categorical") return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? 1 : null;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  return null;
}

export interface FeedbackStatsResult {
  start: string;
  end: string;
  granularity: number;
  timezone: string;
  buckets: Record<string, unknown>[];
  window_stats?: Record<string, Record<string, number | null>>;
}

/**
 * Feedback payload metrics per time bucket (`POST /feedback/stats`, `docs/api/trace.md#feedback`): every
 * bucket of the range with `count` and `<aggregation>_<slug>` / `p<N>_<slug>`, plus the same
 * aggregations over the whole window.
 */
export function feedbackStats(rows: { created_at: string; payload: Record<string, unknown> }[], req: { start: string; end: string; granularity?: number | null; timezone: string; metrics: FeedbackMetric[] }): FeedbackStatsResult {
  const metrics = req.metrics.filter((metric) => metric.aggregations.length > 0 || metric.percentiles.length > 0);
  if (metrics.length === 0) throw new QueryError("At least one metric with aggregations is required");
  const slugs = metrics.map((metric) => metricSlug(metric.json_path));
  const range = bucketRange(parseTimestamp(req.start)!.ms, parseTimestamp(req.end)!.ms, req.granularity, req.timezone);
  const perBucket = range.bucketStarts.map(() => metrics.map(() => [] as (number | null)[]));
  const counts = range.bucketStarts.map(() => 0);
  const window = metrics.map(() => [] as (number | null)[]);
  for (const row of rows) {
    const bucket = bucketIndex(range, parseTimestamp(row.created_at)!.ms);
    if (bucket < 0) continue;
    counts[bucket]! += 1;
    metrics.forEach((metric, index) => {
      const value = metricValue(valueAt(row.payload, metric.json_path), metric.value_type);
      perBucket[bucket]![index]!.push(value);
      window[index]!.push(value);
    });
  }
  const specs: MetricSpec[] = metrics.map((metric) => ({ metric: metric.json_path, aggregations: metric.aggregations, percentiles: metric.percentiles }));
  const buckets = range.bucketStarts.map((start, bucket) => {
    const out: Record<string, unknown> = { timestamp: new Date(start).toISOString() };
    specs.forEach((spec, index) => Object.assign(out, aggregate(perBucket[bucket]![index]!, spec, slugs[index])));
    out.count = counts[bucket];
    return out;
  });
  const window_stats: Record<string, Record<string, number | null>> = {};
  specs.forEach((spec, index) => {
    const values = aggregate(window[index]!, spec, slugs[index]);
    window_stats[slugs[index]!] = Object.fromEntries(Object.entries(values).map(([key, value]) => [key.slice(0, key.length - slugs[index]!.length - 1), value]));
  });
  return { start: formatTimestamp({ ms: range.startMs, micro: 0 }), end: formatTimestamp({ ms: range.endMs, micro: 0 }), granularity: range.granularity, timezone: range.timeZone, buckets, window_stats };
}

/**
 * Leaf paths of sampled payloads with their inferred value type (`POST /feedback/payload_schema`):
 * numbers are numeric, booleans boolean, strings categorical; a path seen with several types is
 * categorical. Only paths usable as `json_path` are listed.
 */
export function payloadSchema(payloads: Record<string, unknown>[]): { json_path: string; value_type: FeedbackValueType }[] {
  const types = new Map<string, Set<FeedbackValueType>>();
  const walk = (value: unknown, path: string[]) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [key, child] of Object.entries(value)) walk(child, [...path, key]);
      return;
    }
    const type: FeedbackValueType | undefined = typeof value === "number" ? "numeric" : typeof value === "boolean" ? "boolean" : typeof value === "string" ? "categorical" : undefined;
    if (!type || path.length === 0) return;
    const name = path.join(".");
    if (!JSON_PATH_PATTERN.test(name)) return;
    const seen = types.get(name) ?? new Set<FeedbackValueType>();
    seen.add(type);
    types.set(name, seen);
  };
  for (const payload of payloads) walk(payload, []);
  return [...types.entries()]
    .map(([json_path, seen]) => ({ json_path, value_type: seen.size === 1 ? [...seen][0]! : ("categorical" as const) }))
    .sort((a, b) => (a.json_path < b.json_path ? -1 : a.json_path > b.json_path ? 1 : 0));
}
