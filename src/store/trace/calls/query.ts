import { type RawBuilder, sql } from "kysely";
import type { Operand, Operation, SortBy } from "../query/ast.js";
import { QueryCompiler } from "../query/compile.js";
import { QueryError } from "../query/errors.js";
import type { Sql, TraceSql } from "../../dialect.js";
import { readOffLoop, readTextColumnOffLoop } from "../../sqlite-reader.js";
import type { TraceDb } from "../call-tables.js";
import { callFieldResolver } from "./fields.js";
import type { CallField } from "./records.js";
import type { CallsFilter, CallsQuery } from "./types.js";

export const MAX_FILTER_LENGTH = 1000;
const FIRST_PAGE = 100;
const PAGE = 1000;
/**
 * Pages that continue by key cost the same whatever their size, so they stay small: reading and
 * converting a page is one piece of work on the event loop (on SQLite the query too), and a
 * 1000-row page took 100–200 ms of it on a busy machine.
 */
const KEYSET_PAGE = 250;
/** Rows fetched at once by id when a query in another order reads its ids first (`rowsByOrderedIds`). */
const ID_PAGE = KEYSET_PAGE;

/**
 * The WHERE conditions of a calls query: project, live (not deleted) and started (has an op name,
 * which the partial indexes also require), then filter and query.
 */
export function callConditions(dialect: TraceSql, q: Pick<CallsQuery, "projectId" | "filter" | "query">): Sql[] {
  const conditions: Sql[] = [sql`c.project_id = ${q.projectId}`, sql`c.deleted_at IS NULL`, sql`c.op_name IS NOT NULL`];
  if (q.filter) conditions.push(...filterConditions(q.projectId, q.filter, dialect.dialect === "sqlite" && q.query ? hasFailedConjunct(q.query) : false));
  if (q.query) conditions.push(new QueryCompiler(dialect, callFieldResolver(dialect, q.projectId)).predicate(q.query));
  return conditions;
}

function list(name: string, values: string[] | null | undefined): string[] | undefined {
  if (!values || values.length === 0) return undefined;
  if (values.length > MAX_FILTER_LENGTH) {
    throw new QueryError(`Parameter: '${name}' request length is greater than max length (${MAX_FILTER_LENGTH}). Actual length: ${values.length}`);
  }
  return values;
}

/** Whether `summary.weave.status = 'error'` is the query or one of its top-level conjuncts. */
function hasFailedConjunct(query: Operation): boolean {
  const conjuncts = "$and" in query ? query.$and : [query];
  return conjuncts.some((operand) => {
    if (!("$eq" in operand)) return false;
    const [left, right] = operand.$eq;
    const isStatus = (side: Operand) => "$getField" in side && side.$getField === "summary.weave.status";
    const isError = (side: Operand) => "$literal" in side && side.$literal === "error";
    return (isStatus(left) && isError(right)) || (isError(left) && isStatus(right));
  });
}

/**
 * The filter's conditions. `failedOnly`: the query also asks for failed calls only, which the small
 * partial index of failed calls serves; on SQLite the roots condition is then written `+c.parent_id
 * IS NULL`, which no index serves, or the planner walked the parent index's roots (every root of the
 * project, in start order) testing each for an exception: 120 ms for a count at 1M calls.
 */
function filterConditions(projectId: string, filter: CallsFilter, failedOnly = false): Sql[] {
  const conditions: Sql[] = [];
  const opNames = list("op_names", filter.op_names);
  if (opNames) {
    // `name:*` matches every version of an op.
    const exact = opNames.filter((name) => !name.endsWith(":*"));
    const prefixes = opNames.filter((name) => name.endsWith(":*")).map((name) => name.slice(0, -1));
    const parts: Sql[] = [];
    if (exact.length > 0) parts.push(sql`c.op_name IN (${sql.join(exact)})`);
    for (const prefix of prefixes) parts.push(sql`substr(c.op_name, 1, ${prefix.length}) = ${prefix}`);
    conditions.push(sql`(${sql.join(parts, sql` OR `)})`);
  }
  for (const [name, direction] of [
    ["input_refs", "input"],
    ["output_refs", "output"],
  ] as const) {
    const refs = list(name, filter[name]);
    if (refs) {
      conditions.push(sql`c.id IN (SELECT r.call_id FROM trace_call_refs r WHERE r.project_id = ${projectId} AND r.direction = ${direction} AND r.ref IN (${sql.join(refs)}))`);
    }
  }
  const columns = [
    ["parent_ids", "parent_id"],
    ["trace_ids", "trace_id"],
    ["call_ids", "id"],
    ["thread_ids", "thread_id"],
    ["turn_ids", "turn_id"],
    ["wb_user_ids", "wb_user_id"],
    ["wb_run_ids", "wb_run_id"],
  ] as const;
  for (const [name, column] of columns) {
    const values = list(name, filter[name]);
    if (values) conditions.push(sql`${sql.ref(`c.${column}`)} IN (${sql.join(values)})`);
  }
  if (filter.trace_roots_only) conditions.push(failedOnly ? sql`+c.parent_id IS NULL` : sql`c.parent_id IS NULL`);
  return conditions;
}

/**
 * The ORDER BY terms (`docs/api/trace.md#calls`): the default is started_at then id ascending; given
 * keys get an implicit id tie-breaker (same direction after started_at, else descending).
 */
export function orderTerms(dialect: TraceSql, projectId: string, sortBy: SortBy[] | null | undefined): Sql[] {
  const keys = effectiveSort(sortBy);
  const compiler = new QueryCompiler(dialect, callFieldResolver(dialect, projectId));
  const resolve = callFieldResolver(dialect, projectId);
  return keys.flatMap((key) => compiler.orderTerms(resolve(key.field), key.direction));
}

export function effectiveSort(sortBy: SortBy[] | null | undefined): SortBy[] {
  if (sortBy === null || sortBy === undefined)
    return [
      { field: "started_at", direction: "asc" },
      { field: "id", direction: "asc" },
    ];
  if (sortBy.length === 0) return [];
  for (const key of sortBy) {
    if (!key.field || key.field.startsWith(".") || key.field.endsWith(".") || key.field.includes("..")) throw new QueryError(`Invalid sort field '${key.field}'`);
  }
  if (sortBy.some((key) => key.field === "id")) return sortBy;
  const last = sortBy[sortBy.length - 1]!;
  return [...sortBy, { field: "id", direction: last.field === "started_at" ? last.direction : "desc" }];
}

/** The started_at/id direction when the order is exactly that (so pages can continue by key, not offset). */
function keysetDirection(sortBy: SortBy[] | null | undefined): "asc" | "desc" | undefined {
  const keys = effectiveSort(sortBy);
  if (keys.length !== 2 || keys[0]!.field !== "started_at" || keys[1]!.field !== "id" || keys[0]!.direction !== keys[1]!.direction) return undefined;
  return keys[0]!.direction;
}

function selectList(dialect: TraceSql, q: CallsQuery, fields: readonly CallField[]): Sql {
  const items: Sql[] = fields.map((field) => sql.ref(`c.${field}`));
  if (fields.includes("attributes")) items.push(sql.ref("c.otel_dump"));
  const size = (alias: string) =>
    sql.join(
      ["attributes", "inputs", "output", "summary"].map((column) => sql`COALESCE(${dialect.byteLength(sql.ref(`${alias}.${column}`))}, 0)`),
      sql` + `,
    );
  if (q.includeStorageSize) items.push(sql`(${size("c")}) AS storage_size_bytes`);
  if (q.includeTotalStorageSize) {
    items.push(
      sql`(CASE WHEN c.parent_id IS NULL THEN (SELECT SUM(${size("t")}) FROM trace_calls t WHERE t.project_id = c.project_id AND t.trace_id = c.trace_id AND t.deleted_at IS NULL AND t.op_name IS NOT NULL) END) AS total_storage_size_bytes`,
    );
  }
  return sql.join(items);
}

/**
 * Where a calls query reads its rows: the table, or — when the leaf index found the few calls that
 * can match (`candidates`) — those calls only, fetched first by id. Materializing them keeps the
 * planner from walking an ordered index of the whole project and testing each call against the list.
 */
function callSource(dialect: TraceSql, projectId: string, candidates: string[] | undefined): { with: Sql; from: Sql; where: Sql[] } {
  if (!candidates) return { with: sql``, from: sql`trace_calls c`, where: [] };
  if (candidates.length === 0) return { with: sql``, from: sql`trace_calls c`, where: [dialect.falseValue] };
  return {
    with: sql`WITH candidates AS MATERIALIZED (SELECT * FROM trace_calls WHERE project_id = ${projectId} AND id IN (${sql.join(candidates)})) `,
    from: sql`candidates c`,
    where: [],
  };
}

/**
 * Runs a calls query in pages and yields rows as they come, so a large result never sits in
 * memory whole. The default order continues by (started_at, id) keys; other orders by offset.
 * `extraConditions` narrow the query further; `candidates` are the only calls it can match.
 */
export async function* queryCallRows(db: TraceDb, dialect: TraceSql, q: CallsQuery, fields: readonly CallField[], options: { extraConditions?: Sql[]; candidates?: string[] } = {}): AsyncGenerator<Record<string, unknown>[]> {
  const source = callSource(dialect, q.projectId, options.candidates);
  const conditions = [...callConditions(dialect, q), ...source.where, ...(options.extraConditions ?? [])];
  const order = orderTerms(dialect, q.projectId, q.sortBy);
  const keyset = keysetDirection(q.sortBy);
  const columns = selectList(dialect, q, fields);
  const needsKeys = keyset && !fields.includes("started_at");
  let remaining = q.limit ?? Number.POSITIVE_INFINITY;
  let offset = q.offset ?? 0;
  let after: { startedAt: string; id: string } | undefined;
  let pageSize = FIRST_PAGE;
  // Without an order a multi-page read still needs a stable one.
  const pageOrder = order.length === 0 && remaining > FIRST_PAGE ? [sql`c.id`] : order;

  if (!keyset && remaining > FIRST_PAGE && fields.includes("id")) {
    yield* rowsByOrderedIds(db, dialect, q, { with: source.with, from: source.from, where: conditions, order: pageOrder, columns }, { limit: remaining, offset });
    return;
  }

  while (remaining > 0) {
    const take = Math.min(pageSize, remaining);
    const where = [...conditions];
    if (after && keyset) {
      where.push(keyset === "asc" ? sql`(c.started_at, c.id) > (${after.startedAt}, ${after.id})` : sql`(c.started_at, c.id) < (${after.startedAt}, ${after.id})`);
    }
    const orderClause = pageOrder.length > 0 ? sql`ORDER BY ${sql.join(pageOrder)}` : sql``;
    const statement: RawBuilder<Record<string, unknown>> =
      sql`${source.with}SELECT ${columns}${needsKeys ? sql`, c.started_at` : sql``} FROM ${source.from} WHERE ${sql.join(where, sql` AND `)} ${orderClause} LIMIT ${take} OFFSET ${after ? 0 : offset}`;
    // A page in another order sorts the whole match (on SQLite: off the event loop).
    const rows = keyset ? (await statement.execute(db)).rows : await readOffLoop(db, statement.compile(db));
    if (rows.length > 0) yield rows;
    if (rows.length < take) return;
    remaining -= rows.length;
    if (keyset) {
      const last = rows[rows.length - 1]!;
      after = { startedAt: last.started_at as string, id: last.id as string };
    } else {
      offset += rows.length;
    }
    pageSize = keyset ? KEYSET_PAGE : PAGE;
  }
}

/**
 * A query in an order other than (started_at, id) cannot continue by key, and paging it by offset
 * made the database sort the whole match again for every page: quadratic (a 60,000-call stream in
 * another order took 135 s on PostgreSQL), and on SQLite each sort held the event loop, 2–3 s per
 * 1000-row page. Instead the matching ids are read once in the query's order (one sort, over ids
 * and sort keys only), then the rows are fetched by id a page at a time and put back in that order:
 * the same rows in the same order; a call deleted in between is left out.
 */
async function* rowsByOrderedIds(
  db: TraceDb,
  dialect: TraceSql,
  q: CallsQuery,
  query: { with: Sql; from: Sql; where: Sql[]; order: Sql[]; columns: Sql },
  range: { limit: number; offset: number },
): AsyncGenerator<Record<string, unknown>[]> {
  const orderClause = query.order.length > 0 ? sql`ORDER BY ${sql.join(query.order)}` : sql``;
  // SQLite takes an OFFSET only after a LIMIT (-1: none); PostgreSQL takes one alone.
  const limit = Number.isFinite(range.limit) ? sql`LIMIT ${range.limit}` : dialect.dialect === "sqlite" ? sql`LIMIT -1` : sql``;
  const idsStatement: RawBuilder<{ id: string }> = sql`${query.with}SELECT c.id FROM ${query.from} WHERE ${sql.join(query.where, sql` AND `)} ${orderClause} ${limit} OFFSET ${range.offset}`;
  // The one sort of the whole match: on SQLite it runs on a reader thread, not the event loop.
  const ids = await readTextColumnOffLoop(db, idsStatement.compile(db));
  for (let start = 0; start < ids.length; start += ID_PAGE) {
    const page = ids.slice(start, start + ID_PAGE);
    // On PostgreSQL one primary-key look-up per id: from a fresh table's statistics, an IN list (or
    // a join) was planned as a scan of the whole project per page (22 s for 250 ids of 60,000 calls).
    const statement: RawBuilder<Record<string, unknown>> =
      dialect.dialect === "postgres"
        ? sql`SELECT ${query.columns} FROM unnest(${page}::text[]) AS wanted(id) CROSS JOIN LATERAL (SELECT * FROM trace_calls t WHERE t.project_id = ${q.projectId} AND t.id = wanted.id AND t.deleted_at IS NULL LIMIT 1) c`
        : sql`SELECT ${query.columns} FROM trace_calls c WHERE c.project_id = ${q.projectId} AND c.deleted_at IS NULL AND c.id IN (${sql.join(page)})`;
    const byId = new Map<string, Record<string, unknown>>((await statement.execute(db)).rows.map((row) => [row.id as string, row]));
    const rows = page.map((id) => byId.get(id)).filter((row): row is Record<string, unknown> => row !== undefined);
    if (rows.length > 0) yield rows;
  }
}

/** Matching calls, counted up to `limit + 1` so `has_more` is exact (`docs/api/trace.md#calls` query_stats). */
export async function countCalls(db: TraceDb, dialect: TraceSql, q: CallsQuery, limit: number | undefined, candidates?: string[]): Promise<{ count: number; hasMore: boolean }> {
  const n = Number((await countStatement(dialect, q, limit, candidates).execute(db)).rows[0]?.n ?? 0);
  return limit === undefined ? { count: n, hasMore: false } : { count: Math.min(n, limit), hasMore: n > limit };
}

/** The statement `countCalls` runs (counting up to `limit + 1`). */
export function countStatement(dialect: TraceSql, q: CallsQuery, limit: number | undefined, candidates?: string[]): RawBuilder<{ n: number | string }> {
  const source = callSource(dialect, q.projectId, candidates);
  const where = sql.join([...callConditions(dialect, q), ...source.where], sql` AND `);
  // SQLite's sampled statistics make it count through the op index (its `op_name IS NOT NULL`
  // range) with a table look-up per call, even where a partial index (failed calls, roots) holds
  // exactly the matches; asking for the list's order lets it pick the index a list would use.
  // PostgreSQL, counting up to a limit, may otherwise walk the op index from its first name to
  // reach an op's calls (an op prefix is no range of that index): 0.3 s at 1M calls for an op
  // after two others, against a few pages' reading in start order.
  const order = dialect.dialect === "sqlite" || limit !== undefined ? sql` ORDER BY c.started_at, c.id` : sql``;
  return limit === undefined && dialect.dialect !== "sqlite"
    ? sql`${source.with}SELECT COUNT(*) AS n FROM ${source.from} WHERE ${where}`
    : sql`${source.with}SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${source.from} WHERE ${where}${order} LIMIT ${limit === undefined ? -1 : limit + 1}) AS matched`;
}

/** Total stored bytes of the traces whose root calls match. */
export async function totalStorageOfMatchedTraces(db: TraceDb, dialect: TraceSql, q: CallsQuery, candidates?: string[]): Promise<number> {
  const source = callSource(dialect, q.projectId, candidates);
  const where = sql.join([...callConditions(dialect, q), ...source.where], sql` AND `);
  const size = sql.join(
    ["attributes", "inputs", "output", "summary"].map((column) => sql`COALESCE(${dialect.byteLength(sql.ref(`t.${column}`))}, 0)`),
    sql` + `,
  );
  const statement: RawBuilder<{ total: number | string | null }> =
    sql`${source.with}SELECT SUM(${size}) AS total FROM trace_calls t WHERE t.project_id = ${q.projectId} AND t.deleted_at IS NULL AND t.op_name IS NOT NULL AND t.trace_id IN (SELECT c.trace_id FROM ${source.from} WHERE ${where} AND c.parent_id IS NULL)`;
  return Number((await statement.execute(db)).rows[0]?.total ?? 0);
}
