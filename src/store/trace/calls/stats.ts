import { sql } from "kysely";
import { aggregate, bucketIndex, bucketRange, type MetricSpec } from "../buckets.js";
import { candidatePrices, normalizeUsage, pickPrice } from "../costs.js";
import type { TraceSql } from "../../dialect.js";
import type { TraceDb } from "../call-tables.js";
import { formatTimestamp, millisBetween, parseTimestamp } from "../timestamps.js";
import { queryCallRows } from "./query.js";
import type { CallsFilter } from "./types.js";

export interface CallStatsRequest {
  projectId: string;
  /** Canonical timestamps; end defaults to now. */
  start: string;
  end?: string | null;
  granularity?: number | null;
  timezone: string;
  usageMetrics: MetricSpec[];
  callMetrics: MetricSpec[];
  filter?: CallsFilter | null;
}

export interface CallStatsResult {
  start: string;
  end: string;
  granularity: number;
  timezone: string;
  usage_buckets: Record<string, unknown>[];
  call_buckets: Record<string, unknown>[];
}

const COST_METRICS = new Set(["input_cost", "output_cost", "total_cost"]);

interface UsagePoint {
  bucket: number;
  model: string;
  values: Record<string, number | null>;
}

const ms = (timestamp: string) => parseTimestamp(timestamp)!.ms;
const numberOrNull = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value)) ? Number(value) : null);

/**
 * Time-bucketed call metrics (`POST /calls/stats`): call buckets (latency, counts, errors) over
 * every bucket of the range, and usage buckets (tokens and costs) per bucket and model, for the
 * calls started in [start, end).
 */
export async function callStats(db: TraceDb, dialect: TraceSql, req: CallStatsRequest): Promise<CallStatsResult> {
  const end = req.end ?? formatTimestamp({ ms: Date.now(), micro: 0 });
  const range = bucketRange(ms(req.start), ms(end), req.granularity, req.timezone);
  const callValues = req.callMetrics.map(() => range.bucketStarts.map(() => [] as (number | null)[]));
  const callCounts = range.bucketStarts.map(() => 0);
  const points: UsagePoint[] = [];
  const wantsCost = req.usageMetrics.some((spec) => COST_METRICS.has(spec.metric));
  const rows: { startedAt: string; usage: Record<string, unknown> }[] = [];

  const query = { projectId: req.projectId, filter: req.filter };
  const bounds = [sql`c.started_at >= ${req.start}`, sql`c.started_at < ${end}`];
  for await (const page of queryCallRows(db, dialect, query, ["id", "started_at", "ended_at", "exception", "summary"], { extraConditions: bounds })) {
    for (const row of page) {
      const startedAt = row.started_at as string;
      const bucket = bucketIndex(range, ms(startedAt));
      if (bucket < 0) continue;
      callCounts[bucket]! += 1;
      req.callMetrics.forEach((spec, index) => callValues[index]![bucket]!.push(callMetric(spec.metric, row)));
      if (req.usageMetrics.length === 0) continue;
      const summary = typeof row.summary === "string" ? (JSON.parse(row.summary) as Record<string, unknown>) : null;
      const usage = summary?.usage;
      if (usage && typeof usage === "object" && !Array.isArray(usage)) rows.push({ startedAt, usage: usage as Record<string, unknown> });
    }
  }

  const models = new Set<string>();
  for (const row of rows) for (const model of Object.keys(row.usage)) models.add(model);
  const prices = wantsCost ? await candidatePrices(db, req.projectId, [...models]) : [];
  for (const row of rows) {
    const bucket = bucketIndex(range, ms(row.startedAt));
    for (const [model, raw] of Object.entries(row.usage)) {
      if (raw === null || typeof raw !== "object") continue;
      points.push({ bucket, model, values: usageMetrics(raw as Record<string, unknown>, wantsCost ? pickPrice(prices, model, row.startedAt) : undefined) });
    }
  }

  const timestamps = range.bucketStarts.map((start) => new Date(start).toISOString());
  const call_buckets = timestamps.map((timestamp, bucket) => {
    const out: Record<string, unknown> = { timestamp };
    req.callMetrics.forEach((spec, index) => Object.assign(out, aggregate(callValues[index]![bucket]!, spec)));
    out.count = callCounts[bucket];
    return out;
  });

  const usage_buckets: Record<string, unknown>[] = [];
  const sortedModels = [...new Set(points.map((point) => point.model))].sort();
  const byKey = new Map<string, UsagePoint[]>();
  for (const point of points) {
    const key = `${point.bucket}\u0000${point.model}`;
    const group = byKey.get(key);
    if (group) group.push(point);
    else byKey.set(key, [point]);
  }
  timestamps.forEach((timestamp, bucket) => {
    for (const model of sortedModels) {
      const group = byKey.get(`${bucket}\u0000${model}`) ?? [];
      const out: Record<string, unknown> = { timestamp, model };
      for (const spec of req.usageMetrics)
        Object.assign(
          out,
          aggregate(
            group.map((point) => point.values[spec.metric] ?? null),
            spec,
          ),
        );
      out.count = group.length;
      usage_buckets.push(out);
    }
  });

  return { start: new Date(range.startMs).toISOString(), end: new Date(range.endMs).toISOString(), granularity: range.granularity, timezone: req.timezone, usage_buckets, call_buckets };
}

function callMetric(metric: string, row: Record<string, unknown>): number | null {
  switch (metric) {
    case "latency_ms":
      return row.ended_at ? millisBetween(row.started_at as string, row.ended_at as string) : null;
    case "call_count":
      return 1;
    case "error_count":
      return row.exception !== null && row.exception !== undefined ? 1 : 0;
    default:
      return null;
  }
}

/**
 * Token metrics of one usage entry (input = prompt + input tokens, output = completion + output
 * tokens) and, with a price, costs: cache tokens priced at their own rates when those are set.
 */
function usageMetrics(usage: Record<string, unknown>, price: ReturnType<typeof pickPrice>): Record<string, number | null> {
  const tokens = normalizeUsage(usage);
  const values: Record<string, number | null> = {
    input_tokens: tokens.prompt,
    output_tokens: tokens.completion,
    total_tokens: numberOrNull(usage.total_tokens),
    cache_read_input_tokens: tokens.cacheRead,
    cache_creation_input_tokens: tokens.cacheCreation,
  };
  if (price) {
    const cacheRead = price.cache_read_input_token_cost > 0 ? tokens.cacheRead : 0;
    const cacheCreation = price.cache_creation_input_token_cost > 0 ? tokens.cacheCreation : 0;
    const input = Math.max(0, tokens.prompt - cacheRead - cacheCreation) * price.prompt_token_cost + cacheRead * price.cache_read_input_token_cost + cacheCreation * price.cache_creation_input_token_cost;
    const output = tokens.completion * price.completion_token_cost;
    Object.assign(values, { input_cost: input, output_cost: output, total_cost: input + output });
  }
  return values;
}
