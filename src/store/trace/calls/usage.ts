import { normalizeUsage } from "../costs.js";

/** Per-model usage of a call and its descendants (`LLMAggregatedUsage`, `docs/api/trace.md#calls`). */
export interface AggregatedUsage {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  prompt_tokens_total_cost: number | null;
  completion_tokens_total_cost: number | null;
  cache_read_input_tokens_total_cost: number | null;
  cache_creation_input_tokens_total_cost: number | null;
}

export interface UsageCall {
  id: string;
  parent_id?: string | null;
  summary?: Record<string, unknown> | null;
}

const COST_KEYS = ["prompt_tokens_total_cost", "completion_tokens_total_cost", "cache_read_input_tokens_total_cost", "cache_creation_input_tokens_total_cost"] as const;

const toNumber = (value: unknown): number => {
  const number = typeof value === "number" ? value : typeof value === "string" ? Number(value) : 0;
  return Number.isFinite(number) ? number : 0;
};

/** A call's own usage per model, from `summary.usage` (and `summary.weave.costs` with costs). */
export function ownUsage(summary: Record<string, unknown> | null | undefined, includeCosts: boolean): Record<string, AggregatedUsage> {
  const usageMap = summary?.usage;
  if (usageMap === null || typeof usageMap !== "object" || Array.isArray(usageMap)) return {};
  const weave = summary?.weave as Record<string, unknown> | undefined;
  const costs = (includeCosts && weave && typeof weave.costs === "object" ? weave.costs : {}) as Record<string, Record<string, unknown> | undefined>;
  const out: Record<string, AggregatedUsage> = {};
  for (const [model, usage] of Object.entries(usageMap as Record<string, unknown>)) {
    if (usage === null || typeof usage !== "object") continue;
    const tokens = normalizeUsage(usage);
    const entry: AggregatedUsage = {
      requests: tokens.requests,
      prompt_tokens: tokens.prompt,
      completion_tokens: tokens.completion,
      total_tokens: tokens.total,
      cache_read_input_tokens: tokens.cacheRead,
      cache_creation_input_tokens: tokens.cacheCreation,
      prompt_tokens_total_cost: null,
      completion_tokens_total_cost: null,
      cache_read_input_tokens_total_cost: null,
      cache_creation_input_tokens_total_cost: null,
    };
    if (includeCosts) for (const key of COST_KEYS) entry[key] = toNumber(costs[model]?.[key]);
    const hasTokens = entry.requests || entry.prompt_tokens || entry.completion_tokens || entry.total_tokens || entry.cache_read_input_tokens || entry.cache_creation_input_tokens;
    const hasCost = includeCosts && COST_KEYS.some((key) => entry[key]);
    if (hasTokens || hasCost) out[model] = entry;
  }
  return out;
}

function merge(into: Record<string, AggregatedUsage>, from: Record<string, AggregatedUsage>, includeCosts: boolean): void {
  for (const [model, usage] of Object.entries(from)) {
    const existing = into[model];
    if (!existing) {
      into[model] = { ...usage };
      continue;
    }
    existing.requests += usage.requests;
    existing.prompt_tokens += usage.prompt_tokens;
    existing.completion_tokens += usage.completion_tokens;
    existing.total_tokens += usage.total_tokens;
    existing.cache_read_input_tokens += usage.cache_read_input_tokens;
    existing.cache_creation_input_tokens += usage.cache_creation_input_tokens;
    if (includeCosts) for (const key of COST_KEYS) existing[key] = (existing[key] ?? 0) + (usage[key] ?? 0);
  }
}

/**
 * Each call's usage plus that of all its descendants among `calls`, merged bottom-up (leaves
 * first), so deep traces need no recursion. Parents outside `calls` receive nothing.
 */
export function usageWithDescendants(calls: UsageCall[], includeCosts: boolean): Record<string, Record<string, AggregatedUsage>> {
  const usage: Record<string, Record<string, AggregatedUsage>> = {};
  const pendingChildren = new Map<string, number>();
  const parentOf = new Map<string, string>();
  for (const call of calls) {
    usage[call.id] = ownUsage(call.summary, includeCosts);
    pendingChildren.set(call.id, pendingChildren.get(call.id) ?? 0);
  }
  for (const call of calls) {
    if (call.parent_id && call.parent_id in usage && call.parent_id !== call.id) {
      parentOf.set(call.id, call.parent_id);
      pendingChildren.set(call.parent_id, (pendingChildren.get(call.parent_id) ?? 0) + 1);
    }
  }
  const ready = [...pendingChildren].filter(([, count]) => count === 0).map(([id]) => id);
  while (ready.length > 0) {
    const id = ready.pop()!;
    const parent = parentOf.get(id);
    if (parent === undefined) continue;
    merge(usage[parent]!, usage[id]!, includeCosts);
    const left = pendingChildren.get(parent)! - 1;
    pendingChildren.set(parent, left);
    if (left === 0) ready.push(parent);
  }
  return usage;
}
