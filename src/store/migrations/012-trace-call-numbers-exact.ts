import { type Kysely, PostgresAdapter, sql } from "kysely";

const JSON_COLUMNS = ["inputs", "attributes", "output", "summary"] as const;
const PAGE = 1000;
/** Rows per INSERT: SQLite allows 32766 parameters per statement; 5 per row. */
const ROWS_PER_INSERT = 5000;
const MAX_NUMBERS_PER_COLUMN = 64;
const MAX_DEPTH = 16;
const LOOSE_NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const EXACT_INTEGER = /^-?\d{1,15}$/;
const EXACT_LIMIT = 1e15;

/**
 * The range index gains an exact tier and latency rows (`store/trace/calls/range-index.ts`):
 * `exact` marks rows whose value every database reads exactly (integers below 10^15 written as
 * digits), which look-ups compare with a query's bounds as written, so a strict bound at a value
 * many calls hold no longer takes them; and each ended call gets a row of its latency
 * (`summary.weave.latency_ms`), computed by the database with the query's own expression. The
 * column is part of the primary key, so the table is made again and filled from the stored calls.
 * Like 011 it keeps its own copy of the rules as they shipped.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.dropTable("trace_call_numbers").execute();
  if (postgres) {
    await sql`CREATE TABLE trace_call_numbers (project_id text COLLATE "C" NOT NULL, path_key bigint NOT NULL, exact smallint NOT NULL, value double precision NOT NULL, call_id text COLLATE "C" NOT NULL, PRIMARY KEY (project_id, path_key, exact, value, call_id))`.execute(
      db,
    );
  } else {
    await sql`CREATE TABLE trace_call_numbers (project_id TEXT NOT NULL, path_key INTEGER NOT NULL, exact INTEGER NOT NULL, value REAL NOT NULL, call_id TEXT NOT NULL, PRIMARY KEY (project_id, path_key, exact, value, call_id)) WITHOUT ROWID`.execute(
      db,
    );
  }
  await fillNumbers(db);
  await fillLatencies(db, postgres);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("trace_call_numbers").execute();
}

function hash53(text: string): number {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995);
  }
  let x = a ^ (b >>> 15);
  x = Math.imul(x, 0x85ebca6b);
  let y = b ^ (x >>> 13);
  y = Math.imul(y, 0xc2b2ae35);
  x ^= y >>> 16;
  return (y >>> 11) * 0x100000000 + (x >>> 0);
}

/** (value, exact) of a string that spells a number under the loose reading. */
function spelledNumber(text: string): [number, boolean] | undefined {
  const trimmed = text.trim();
  if (trimmed.length === 0 || !LOOSE_NUMBER.test(trimmed)) return undefined;
  return [Math.max(-Number.MAX_VALUE, Math.min(Number.MAX_VALUE, Number(trimmed))), EXACT_INTEGER.test(trimmed)];
}

/** (path key, exact, value) of each numeric leaf of a column value; an overflow row past the limits. */
function numberLeaves(column: string, value: unknown): [number, number, number][] {
  const leaves: [number, number, number][] = [];
  const walk = (node: unknown, path: string[]): boolean => {
    let number: [number, boolean] | undefined;
    if (typeof node === "number") number = Number.isFinite(node) ? [node, Number.isInteger(node) && Math.abs(node) < EXACT_LIMIT] : undefined;
    else if (typeof node === "string") number = spelledNumber(node);
    else if (node !== null && typeof node === "object" && !Array.isArray(node)) {
      if (path.length >= MAX_DEPTH) return false;
      for (const key in node as Record<string, unknown>) if (!walk((node as Record<string, unknown>)[key], [...path, key])) return false;
      return true;
    }
    if (number === undefined) return true;
    if (leaves.length >= MAX_NUMBERS_PER_COLUMN) return false;
    leaves.push([hash53(path.length === 0 ? column : `${column}\u0000${path.join("\u0000")}`), number[1] ? 1 : 0, number[0]]);
    return true;
  };
  if (!walk(value, [])) leaves.push([hash53(`${column}\u0001`), 0, 0]);
  return leaves;
}

/** Adds the rows of the JSON leaves of every stored call that is not deleted, a page at a time in key order. */
export async function fillNumbers(db: Kysely<any>): Promise<void> {
  let after: { project_id: string; id: string } | undefined;
  for (;;) {
    let page = db
      .selectFrom("trace_calls")
      .select(["project_id", "id", "deleted_at", ...JSON_COLUMNS])
      .orderBy("project_id")
      .orderBy("id")
      .limit(PAGE);
    if (after) page = page.where(sql<boolean>`(project_id, id) > (${after.project_id}, ${after.id})`);
    const rows: Record<string, string | null>[] = await page.execute();
    if (rows.length === 0) return;
    const values: { project_id: string; path_key: number; exact: number; value: number; call_id: string }[] = [];
    for (const row of rows) {
      // A deleted call has no rows.
      if (row.deleted_at !== null) continue;
      for (const column of JSON_COLUMNS) {
        if (row[column] === null || row[column] === undefined) continue;
        for (const [pathKey, exact, value] of numberLeaves(column, JSON.parse(row[column]!))) values.push({ project_id: row.project_id!, path_key: pathKey, exact, value, call_id: row.id! });
      }
    }
    for (let i = 0; i < values.length; i += ROWS_PER_INSERT)
      await db
        .insertInto("trace_call_numbers")
        .values(values.slice(i, i + ROWS_PER_INSERT))
        .onConflict((conflict) => conflict.doNothing())
        .execute();
    const last = rows[rows.length - 1]!;
    after = { project_id: last.project_id!, id: last.id! };
  }
}

/** Adds the latency row of every ended call that is not deleted, with the query's expression as it shipped. */
export async function fillLatencies(db: Kysely<any>, postgres: boolean): Promise<void> {
  const millis = postgres
    ? "CAST(FLOOR(EXTRACT(EPOCH FROM (CAST(c.ended_at AS timestamptz) - CAST(c.started_at AS timestamptz))) * 1000) AS double precision)"
    : "CAST(ROUND((julianday(c.ended_at) - julianday(c.started_at)) * 86400000) AS INTEGER)";
  const key = hash53("\u0002latency_ms");
  await sql`INSERT INTO trace_call_numbers (project_id, path_key, exact, value, call_id) SELECT c.project_id, CAST(${key} AS bigint), 1, ${sql.raw(millis)}, c.id FROM trace_calls c WHERE c.started_at IS NOT NULL AND c.ended_at IS NOT NULL AND c.deleted_at IS NULL AND ${sql.raw(millis)} IS NOT NULL ON CONFLICT DO NOTHING`.execute(
    db,
  );
}
