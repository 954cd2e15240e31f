import { type Kysely, PostgresAdapter, sql } from "kysely";
import type { DialectName } from "../db.js";
import { type LeafDocument, leafInsertStatements } from "../trace/calls/leaf-index.js";
import { leafKeys } from "../trace/calls/leaf-keys.js";

const JSON_COLUMNS = ["inputs", "attributes", "output", "summary"] as const;
const PAGE = 1000;

/**
 * The call leaf index (`store/trace/calls/leaf-index.ts`), filled from the calls already stored;
 * and the thread index limited to calls that have a thread, since every thread query asks for one
 * and most calls have none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect: DialectName = db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
  if (dialect === "sqlite") {
    // Terms only (detail=none: no positions), the call id kept beside them.
    await sql`CREATE VIRTUAL TABLE trace_call_terms USING fts5(terms, call_id UNINDEXED, content='', contentless_unindexed=1, columnsize=0, detail=none, tokenize='ascii')`.execute(db);
  } else {
    await db.schema.createTable("trace_call_leaves").addColumn("call_id", sql`text COLLATE "C"`, (col) => col.notNull()).addColumn("keys", sql`bigint[]`, (col) => col.notNull()).execute();
    await sql`CREATE INDEX trace_call_leaves_keys ON trace_call_leaves USING gin (keys)`.execute(db);
  }
  await fillLeaves(db, dialect);

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

/** Adds a leaf document for every stored call, a page at a time in key order. */
export async function fillLeaves(db: Kysely<any>, dialect: DialectName): Promise<void> {
  let after: { project_id: string; id: string } | undefined;
  for (;;) {
    let page = db.selectFrom("trace_calls").select(["project_id", "id", ...JSON_COLUMNS]).orderBy("project_id").orderBy("id").limit(PAGE);
    if (after) page = page.where(sql<boolean>`(project_id, id) > (${after.project_id}, ${after.id})`);
    const rows: Record<string, string | null>[] = await page.execute();
    if (rows.length === 0) return;
    const documents: LeafDocument[] = rows.map((row) => ({
      callId: row.id!,
      keys: JSON_COLUMNS.flatMap((column) => (row[column] === null || row[column] === undefined ? [] : leafKeys(row.project_id!, column, JSON.parse(row[column]!)))),
    }));
    for (const statement of leafInsertStatements(dialect, documents)) await db.executeQuery(statement);
    const last = rows[rows.length - 1]!;
    after = { project_id: last.project_id!, id: last.id! };
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.dropIndex("trace_calls_thread").execute();
  await db.schema.createIndex("trace_calls_thread").on("trace_calls").columns(["project_id", "thread_id"]).where(sql.ref("deleted_at"), "is", null).where(sql.ref("op_name"), "is not", null).execute();
  await db.schema.dropTable(postgres ? "trace_call_leaves" : "trace_call_terms").execute();
}
