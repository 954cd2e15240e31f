import { type Kysely, PostgresAdapter, sql } from "kysely";

const JSON_COLUMNS = ["inputs", "attributes", "output", "summary"] as const;
const PAGE = 1000;
/** Rows per INSERT: SQLite allows 32766 parameters per statement; 4 per row. */
const ROWS_PER_INSERT = 5000;
const MAX_NUMBERS_PER_COLUMN = 64;
const MAX_DEPTH = 16;
const LOOSE_NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/**
 * The range index (`store/trace/calls/range-index.ts`): the numeric leaves of calls by value, so a
 * range filter on a JSON path reads the few calls it can match instead of every call in time
 * order; filled from the calls already stored. This migration keeps its own copy of how rows were
 * derived when it shipped (`store/trace/calls/number-leaves.ts` at the time), so later changes to
 * the application leave it as it ran; a change to the derivation needs a new migration that
 * rebuilds the index.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    await sql`CREATE TABLE trace_call_numbers (project_id text COLLATE "C" NOT NULL, path_key bigint NOT NULL, value double precision NOT NULL, call_id text COLLATE "C" NOT NULL, PRIMARY KEY (project_id, path_key, value, call_id))`.execute(
      db,
    );
  } else {
    await sql`CREATE TABLE trace_call_numbers (project_id TEXT NOT NULL, path_key INTEGER NOT NULL, value REAL NOT NULL, call_id TEXT NOT NULL, PRIMARY KEY (project_id, path_key, value, call_id)) WITHOUT ROWID`.execute(db);
  }
  await fillNumbers(db);
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

function spelledNumber(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed.length === 0 || !LOOSE_NUMBER.test(trimmed)) return undefined;
  return Math.max(-Number.MAX_VALUE, Math.min(Number.MAX_VALUE, Number(trimmed)));
}

/** (path key, value) of each numeric leaf of a column value; an overflow row past the limits. */
function numberLeaves(column: string, value: unknown): [number, number][] {
  const leaves: [number, number][] = [];
  const walk = (node: unknown, path: string[]): boolean => {
    let number: number | undefined;
    if (typeof node === "number") number = Number.isFinite(node) ? node : undefined;
    else if (typeof node === "string") number = spelledNumber(node);
    else if (node !== null && typeof node === "object" && !Array.isArray(node)) {
      if (path.length >= MAX_DEPTH) return false;
      for (const key in node as Record<string, unknown>) if (!walk((node as Record<string, unknown>)[key], [...path, key])) return false;
      return true;
    }
    if (number === undefined) return true;
    if (leaves.length >= MAX_NUMBERS_PER_COLUMN) return false;
    leaves.push([hash53(path.length === 0 ? column : `${column}\u0000${path.join("\u0000")}`), number]);
    return true;
  };
  if (!walk(value, [])) leaves.push([hash53(`${column}\u0001`), 0]);
  return leaves;
}

/** Adds the rows of every stored call that is not deleted, a page at a time in key order. */
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
    const values: { project_id: string; path_key: number; value: number; call_id: string }[] = [];
    for (const row of rows) {
      // A deleted call has no rows.
      if (row.deleted_at !== null) continue;
      for (const column of JSON_COLUMNS) {
        if (row[column] === null || row[column] === undefined) continue;
        for (const [pathKey, value] of numberLeaves(column, JSON.parse(row[column]!))) values.push({ project_id: row.project_id!, path_key: pathKey, value, call_id: row.id! });
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
