import { sql } from "kysely";
import type { DialectName } from "../db.js";
import { uuidv7 } from "./ids.js";
import type { Operation, SortBy } from "./query/ast.js";
import { type FieldResolver, QueryCompiler } from "./query/compile.js";
import { QueryError } from "./query/errors.js";
import { traceSql } from "../dialect.js";
import type { TraceCostsTable, TraceDb } from "./call-tables.js";
import { nowTimestamp } from "./timestamps.js";

/** One price of `POST /cost/create` (`docs/api/trace.md#costs`); costs are per token. */
export interface CostInput {
  prompt_token_cost: number;
  completion_token_cost: number;
  cache_read_input_token_cost: number;
  cache_creation_input_token_cost: number;
  prompt_token_cost_unit: string;
  completion_token_cost_unit: string;
  /** Canonical timestamp text. */
  effective_date: string;
  provider_id: string;
}

export const COST_FIELDS = [
  "id",
  "llm_id",
  "prompt_token_cost",
  "completion_token_cost",
  "cache_read_input_token_cost",
  "cache_creation_input_token_cost",
  "prompt_token_cost_unit",
  "completion_token_cost_unit",
  "effective_date",
  "provider_id",
] as const;

const NUMBER_FIELDS = new Set(["prompt_token_cost", "completion_token_cost", "cache_read_input_token_cost", "cache_creation_input_token_cost"]);
const TIMESTAMP_FIELDS = new Set(["effective_date", "created_at"]);
const STRING_FIELDS = new Set(["id", "llm_id", "prompt_token_cost_unit", "completion_token_cost_unit", "provider_id", "pricing_level", "pricing_level_id", "created_by"]);

export const costFieldResolver: FieldResolver = (field) => {
  if (NUMBER_FIELDS.has(field)) return { kind: "scalar", type: "number", sql: sql.ref(`p.${field}`) };
  if (TIMESTAMP_FIELDS.has(field)) return { kind: "scalar", type: "timestamp", sql: sql.ref(`p.${field}`) };
  if (STRING_FIELDS.has(field)) return { kind: "scalar", type: "string", sql: sql.ref(`p.${field}`) };
  throw new QueryError(`Unknown cost field '${field}'`);
};

/** Stores project-level prices; returns `[llm_id, cost_id]` pairs in request order. */
export async function createCosts(db: TraceDb, projectId: string, costs: Record<string, CostInput>, createdBy: string | null): Promise<[string, string][]> {
  const createdAt = nowTimestamp();
  const rows: TraceCostsTable[] = Object.entries(costs).map(([llmId, cost]) => ({
    id: uuidv7(),
    pricing_level: "project",
    pricing_level_id: projectId,
    llm_id: llmId,
    created_by: createdBy,
    created_at: createdAt,
    ...cost,
  }));
  if (rows.length > 0) await db.insertInto("trace_costs").values(rows).execute();
  return rows.map((row) => [row.llm_id, row.id]);
}

export interface CostQuery {
  projectId: string;
  fields?: string[] | null;
  query?: Operation | null;
  sortBy?: SortBy[] | null;
  limit?: number | null;
  offset?: number | null;
}

/** The project's prices (never the global defaults), with the query language over the price columns. */
export async function queryCosts(db: TraceDb, dialect: DialectName, q: CostQuery): Promise<Record<string, unknown>[]> {
  const fields = q.fields && q.fields.length > 0 ? q.fields : [...COST_FIELDS];
  for (const field of fields) costFieldResolver(field);
  const compiler = new QueryCompiler(traceSql(dialect), costFieldResolver);
  const conditions = [sql`p.pricing_level = 'project'`, sql`p.pricing_level_id = ${q.projectId}`];
  if (q.query) conditions.push(compiler.predicate(q.query));
  const order = (q.sortBy ?? []).flatMap((key) => compiler.orderTerms(costFieldResolver(key.field), key.direction));
  order.push(sql`p.id ASC`);
  const statement = sql<
    Record<string, unknown>
  >`SELECT ${sql.join(fields.map((field) => sql.ref(`p.${field}`)))} FROM trace_costs p WHERE ${sql.join(conditions, sql` AND `)} ORDER BY ${sql.join(order)} ${traceSql(dialect).limitOffset(q.limit, q.offset)}`;
  const rows = (await statement.execute(db)).rows;
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const field of fields) out[field] = NUMBER_FIELDS.has(field) ? Number(row[field]) : row[field];
    return out;
  });
}

/** Deletes the project's prices with these ids. */
export async function purgeCosts(db: TraceDb, projectId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom("trace_costs").where("pricing_level", "=", "project").where("pricing_level_id", "=", projectId).where("id", "in", ids).execute();
}

/** Every price that may apply to these LLMs in the project: its own and the global defaults. */
export async function candidatePrices(db: TraceDb, projectId: string, llmIds: string[]): Promise<TraceCostsTable[]> {
  if (llmIds.length === 0) return [];
  return db
    .selectFrom("trace_costs")
    .selectAll()
    .where("llm_id", "in", llmIds)
    .where((eb) => eb.or([eb.and([eb("pricing_level", "=", "project"), eb("pricing_level_id", "=", projectId)]), eb.and([eb("pricing_level", "=", "default"), eb("pricing_level_id", "=", "default")])]))
    .execute();
}

/**
 * The price for one LLM of a call started at `startedAt` (`docs/api/trace.md#costs`): prices already in
 * effect first, then project over global, then the newest.
 */
export function pickPrice(prices: TraceCostsTable[], llmId: string, startedAt: string): TraceCostsTable | undefined {
  let best: TraceCostsTable | undefined;
  let bestRank: [number, number, string] | undefined;
  for (const price of prices) {
    if (price.llm_id !== llmId) continue;
    const rank: [number, number, string] = [price.effective_date <= startedAt ? 0 : 1, price.pricing_level === "project" ? 0 : 1, price.effective_date];
    if (!bestRank || rank[0] < bestRank[0] || (rank[0] === bestRank[0] && (rank[1] < bestRank[1] || (rank[1] === bestRank[1] && rank[2] > bestRank[2])))) {
      best = price;
      bestRank = rank;
    }
  }
  return best;
}

const count = (value: unknown): number => {
  const number = typeof value === "number" ? value : typeof value === "string" ? Number(value) : 0;
  return Number.isFinite(number) ? Math.trunc(number) : 0;
};

/** Token counts of one `summary.usage` entry, with the OpenAI and Anthropic names folded together. */
export function normalizeUsage(usage: unknown): { requests: number; prompt: number; completion: number; total: number; cacheRead: number; cacheCreation: number } {
  const u = (usage !== null && typeof usage === "object" ? usage : {}) as Record<string, unknown>;
  const prompt = count(u.prompt_tokens) + count(u.input_tokens);
  const completion = count(u.completion_tokens) + count(u.output_tokens);
  const total = count(u.total_tokens) || prompt + completion;
  return { requests: count(u.requests), prompt, completion, total, cacheRead: count(u.cache_read_input_tokens), cacheCreation: count(u.cache_creation_input_tokens) };
}

/** `summary.weave.costs` of a call: one entry per priced LLM of `summary.usage`; undefined when none is priced. */
export function costsOf(usageMap: unknown, startedAt: string, prices: TraceCostsTable[]): Record<string, unknown> | undefined {
  if (usageMap === null || typeof usageMap !== "object") return undefined;
  const costs: Record<string, unknown> = {};
  for (const [llmId, usage] of Object.entries(usageMap as Record<string, unknown>)) {
    const price = pickPrice(prices, llmId, startedAt);
    if (!price) continue;
    const tokens = normalizeUsage(usage);
    costs[llmId] = {
      prompt_tokens: tokens.prompt,
      completion_tokens: tokens.completion,
      requests: tokens.requests,
      total_tokens: tokens.total,
      cache_read_input_tokens: tokens.cacheRead,
      cache_creation_input_tokens: tokens.cacheCreation,
      prompt_token_cost: price.prompt_token_cost,
      completion_token_cost: price.completion_token_cost,
      prompt_tokens_total_cost: tokens.prompt * price.prompt_token_cost,
      completion_tokens_total_cost: tokens.completion * price.completion_token_cost,
      cache_read_input_tokens_total_cost: tokens.cacheRead * price.cache_read_input_token_cost,
      cache_creation_input_tokens_total_cost: tokens.cacheCreation * price.cache_creation_input_token_cost,
      prompt_token_cost_unit: price.prompt_token_cost_unit,
      completion_token_cost_unit: price.completion_token_cost_unit,
      effective_date: price.effective_date,
      provider_id: price.provider_id,
      pricing_level: price.pricing_level,
      pricing_level_id: price.pricing_level_id,
      created_by: price.created_by,
      created_at: price.created_at,
    };
  }
  return Object.keys(costs).length > 0 ? costs : undefined;
}
