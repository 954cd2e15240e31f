import { type Kysely, PostgresAdapter, sql } from "kysely";

const JSON_COLUMNS = ["inputs", "attributes", "output", "summary"] as const;
const PAGE = 1000;
/** Rows per INSERT: SQLite allows 32766 parameters per statement; 2 per row. */
const ROWS_PER_INSERT = 5000;

/**
 * The call leaf index (`store/trace/calls/leaf-index.ts`), filled from the calls already stored;
 * and the thread index limited to calls that have a thread, since every thread query asks for one
 * and most calls have none. This migration keeps its own copy of how the keys were derived when it
 * shipped (`store/trace/calls/leaf-keys.ts` at the time), so later changes to the application leave
 * it as it ran; a change to the key derivation needs a new migration that rebuilds the index.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (!postgres) {
    // Terms only (detail=none: no positions), the call id kept beside them.
    await sql`CREATE VIRTUAL TABLE trace_call_terms USING fts5(terms, call_id UNINDEXED, content='', contentless_unindexed=1, columnsize=0, detail=none, tokenize='ascii')`.execute(db);
  } else {
    await db.schema
      .createTable("trace_call_leaves")
      .addColumn("call_id", sql`text COLLATE "C"`, (col) => col.notNull())
      .addColumn("keys", sql`bigint[]`, (col) => col.notNull())
      .execute();
    await sql`CREATE INDEX trace_call_leaves_keys ON trace_call_leaves USING gin (keys)`.execute(db);
  }
  await fillLeaves(db);

  await db.schema.dropIndex("trace_calls_thread").execute();
  await db.schema
    .createIndex("trace_calls_thread")
    .on("trace_calls")
    .columns(["project_id", "thread_id"])
    .where(sql.ref("deleted_at"), "is", null)
    .where(sql.ref("op_name"), "is not", null)
    .where(sql.ref("thread_id"), "is not", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.dropIndex("trace_calls_thread").execute();
  await db.schema.createIndex("trace_calls_thread").on("trace_calls").columns(["project_id", "thread_id"]).where(sql.ref("deleted_at"), "is", null).where(sql.ref("op_name"), "is not", null).execute();
  await db.schema.dropTable(postgres ? "trace_call_leaves" : "trace_call_terms").execute();
}

/**
 * Adds a leaf document for every stored call, a page at a time in key order: on SQLite an FTS5 row
 * whose terms are `k<key>`, on PostgreSQL a row of (call id, keys).
 */
export async function fillLeaves(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  let after: { project_id: string; id: string } | undefined;
  for (;;) {
    let page = db
      .selectFrom("trace_calls")
      .select(["project_id", "id", ...JSON_COLUMNS])
      .orderBy("project_id")
      .orderBy("id")
      .limit(PAGE);
    if (after) page = page.where(sql<boolean>`(project_id, id) > (${after.project_id}, ${after.id})`);
    const rows: Record<string, string | null>[] = await page.execute();
    if (rows.length === 0) return;
    const documents: { callId: string; keys: number[] }[] = rows.map((row) => ({
      callId: row.id!,
      keys: JSON_COLUMNS.flatMap((column) => (row[column] === null || row[column] === undefined ? [] : leafKeys(row.project_id!, column, JSON.parse(row[column]!)))),
    }));
    const filled = documents.filter((document) => document.keys.length > 0);
    for (let i = 0; i < filled.length; i += ROWS_PER_INSERT) {
      const chunk = filled.slice(i, i + ROWS_PER_INSERT);
      if (postgres)
        await db
          .insertInto("trace_call_leaves")
          .values(chunk.map((document) => ({ call_id: document.callId, keys: document.keys })))
          .execute();
      else
        await db
          .insertInto("trace_call_terms")
          .values(chunk.map((document) => ({ terms: document.keys.map((key) => `k${key}`).join(" "), call_id: document.callId })))
          .execute();
    }
    const last = rows[rows.length - 1]!;
    after = { project_id: last.project_id!, id: last.id! };
  }
}

// The key derivation as it shipped with this migration: a 53-bit hash of (project, column, path,
// value) per scalar leaf, at most MAX_KEYS_PER_COLUMN per column and then an overflow key.

const MAX_TEXT_LENGTH = 256;
const MAX_KEYS_PER_COLUMN = 64;
const MAX_DEPTH = 16;
const LOOSE_NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/**
 * A 53-bit hash (two 32-bit FNV-1a style lanes, mixed at the end), fed piece by piece so a walk
 * hashes each path prefix once. Keys are exact integers on both dialects.
 */
class KeyHash {
  a = 0;
  b = 0;

  start(projectId: string, column: string): void {
    this.a = 0x811c9dc5;
    this.b = 0x050c5d1f;
    this.feed(projectId);
    this.feedCode(0);
    this.feed(column);
  }

  feed(text: string): void {
    let a = this.a;
    let b = this.b;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      a = Math.imul(a ^ code, 0x01000193);
      b = Math.imul(b ^ code, 0x5bd1e995);
    }
    this.a = a;
    this.b = b;
  }

  feedCode(code: number): void {
    this.a = Math.imul(this.a ^ code, 0x01000193);
    this.b = Math.imul(this.b ^ code, 0x5bd1e995);
  }

  /** The key of the current path with a value of `kind` ("t" text, "n" number, "o" overflow). */
  key(kind: number, value: string): number {
    const a = this.a;
    const b = this.b;
    this.feedCode(1);
    this.feedCode(kind);
    this.feed(value);
    let x = this.a ^ (this.b >>> 15);
    x = Math.imul(x, 0x85ebca6b);
    let y = this.b ^ (x >>> 13);
    y = Math.imul(y, 0xc2b2ae35);
    x ^= y >>> 16;
    this.a = a;
    this.b = b;
    return (y >>> 11) * 0x100000000 + (x >>> 0);
  }
}

const TEXT = 0x74;
const NUMBER = 0x6e;
const OVERFLOW = 0x6f;

/** The text of a number rounded to 12 significant digits (integers that short are their own rounding). */
function roundedNumber(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e11) return String(value);
  return String(Number(value.toPrecision(12)));
}

/** The number a string spells under the loosest reading of the dialects' checks, if any. */
function looseNumber(text: string): number | undefined {
  // Most strings are not numbers: their first character tells.
  const first = text.charCodeAt(0);
  if (!((first >= 48 && first <= 57) || first === 45 || first === 43 || first === 46 || first <= 32 || first === 160 || first > 0x1000)) return undefined;
  const trimmed = text.trim();
  if (trimmed.length === 0 || !LOOSE_NUMBER.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

function pathHash(projectId: string, column: string, path: readonly string[]): KeyHash {
  const hash = new KeyHash();
  hash.start(projectId, column);
  for (const segment of path) {
    hash.feedCode(0);
    hash.feed(segment);
  }
  return hash;
}

function overflowKey(projectId: string, column: string): number {
  return pathHash(projectId, column, []).key(OVERFLOW, "");
}

/** Walks one column value, collecting keys into `keys`; false once past the limits. */
function collect(node: unknown, hash: KeyHash, depth: number, keys: number[]): boolean {
  if (keys.length >= MAX_KEYS_PER_COLUMN) return false;
  if (typeof node === "string") {
    if (node.length <= MAX_TEXT_LENGTH) keys.push(hash.key(TEXT, node));
    const number = looseNumber(node);
    if (number !== undefined) keys.push(hash.key(NUMBER, roundedNumber(number)));
  } else if (typeof node === "number") {
    if (Number.isFinite(node)) keys.push(hash.key(NUMBER, roundedNumber(node)));
  } else if (typeof node === "boolean") {
    keys.push(hash.key(TEXT, node ? "true" : "false"));
  } else if (node !== null && typeof node === "object" && !Array.isArray(node)) {
    if (depth >= MAX_DEPTH) return false;
    const a = hash.a;
    const b = hash.b;
    for (const key in node as Record<string, unknown>) {
      hash.feedCode(0);
      hash.feed(key);
      const fits = collect((node as Record<string, unknown>)[key], hash, depth + 1, keys);
      hash.a = a;
      hash.b = b;
      if (!fits) return false;
    }
  }
  return true;
}

/**
 * The keys of every scalar leaf of one stored column value, in document order; an overflow key
 * replaces what goes beyond the limits.
 */
function leafKeys(projectId: string, column: string, value: unknown): number[] {
  const keys: number[] = [];
  const hash = new KeyHash();
  hash.start(projectId, column);
  const fits = collect(value, hash, 0, keys);
  if (!fits || keys.length > MAX_KEYS_PER_COLUMN) return [...keys.slice(0, MAX_KEYS_PER_COLUMN), overflowKey(projectId, column)];
  return keys;
}
