import { type Kysely, PostgresAdapter, sql } from "kysely";

const PAGE = 1000;

/**
 * What the trace list's filters need at scale:
 * - the call text index (`store/trace/calls/text-index.ts`): trigram documents of the text that
 *   `$contains` searches, filled from the calls already stored (this migration keeps its own copy
 *   of how a document is made, so later changes to the application leave it as it ran);
 * - a partial index of failed calls in start order, for `summary.weave.status = error`;
 * - feedback by type, and a call's feedback by type and time, for filters on a call's newest
 *   feedback of a type.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    // pg_trgm ships with PostgreSQL (contrib) and is a trusted extension: a database owner may create it.
    await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
    await db.schema
      .createTable("trace_call_text")
      .addColumn("project_id", sql`text COLLATE "C"`, (col) => col.notNull())
      .addColumn("call_id", sql`text COLLATE "C"`, (col) => col.notNull())
      .addColumn("body", "text", (col) => col.notNull())
      .execute();
    await sql`CREATE INDEX trace_call_text_body ON trace_call_text USING gin (body gin_trgm_ops)`.execute(db);
  } else {
    // Trigrams only (detail=none: no positions), case folded; project and call id kept beside them.
    await sql`CREATE VIRTUAL TABLE trace_call_text USING fts5(body, project_id UNINDEXED, call_id UNINDEXED, content='', contentless_unindexed=1, columnsize=0, detail=none, tokenize='trigram case_sensitive 0')`.execute(db);
  }
  await fillText(db);

  await db.schema
    .createIndex("trace_calls_failed")
    .on("trace_calls")
    .columns(["project_id", "started_at", "id"])
    .where(sql.ref("deleted_at"), "is", null)
    .where(sql.ref("op_name"), "is not", null)
    .where(sql.ref("exception"), "is not", null)
    .execute();
  await db.schema.createIndex("trace_feedback_type").on("trace_feedback").columns(["project_id", "feedback_type", "weave_ref"]).execute();
  // A call's newest feedback of a type (what `feedback.[type].…` fields read), found without
  // walking the project's feedback in time order.
  await db.schema.createIndex("trace_feedback_newest").on("trace_feedback").columns(["project_id", "weave_ref", "feedback_type", "created_at"]).execute();
}

/** A stored JSON column's searchable text: the JSON text, plus its strings unescaped when it has escapes. */
function jsonText(stored: string | null): string {
  if (stored === null) return "";
  if (!stored.includes("\\")) return stored;
  const strings: string[] = [];
  const walk = (node: unknown): void => {
    if (typeof node === "string") strings.push(node);
    else if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === "object") Object.values(node).forEach(walk);
  };
  walk(JSON.parse(stored));
  return `${stored}\n${strings.join("\n").replaceAll("\u0000", "\n")}`;
}

/** Adds the documents of every stored call (its start part and its end part), a page at a time in key order. */
export async function fillText(db: Kysely<any>): Promise<void> {
  let after: { project_id: string; id: string } | undefined;
  for (;;) {
    let page = db.selectFrom("trace_calls").select(["project_id", "id", "op_name", "display_name", "inputs", "output"]).orderBy("project_id").orderBy("id").limit(PAGE);
    if (after) page = page.where(sql<boolean>`(project_id, id) > (${after.project_id}, ${after.id})`);
    const rows: Record<string, string | null>[] = await page.execute();
    if (rows.length === 0) return;
    const values: { body: string; project_id: string; call_id: string }[] = [];
    for (const row of rows) {
      if (row.op_name !== null) values.push({ body: `${row.op_name}\n${row.display_name ?? ""}\n${jsonText(row.inputs ?? null)}`, project_id: row.project_id!, call_id: row.id! });
      if (row.output !== null) values.push({ body: jsonText(row.output ?? null), project_id: row.project_id!, call_id: row.id! });
    }
    // SQLite allows 32766 parameters per statement; 3 per row.
    for (let i = 0; i < values.length; i += 5000)
      await db
        .insertInto("trace_call_text")
        .values(values.slice(i, i + 5000))
        .execute();
    const last = rows[rows.length - 1]!;
    after = { project_id: last.project_id!, id: last.id! };
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("trace_feedback_newest").execute();
  await db.schema.dropIndex("trace_feedback_type").execute();
  await db.schema.dropIndex("trace_calls_failed").execute();
  await db.schema.dropTable("trace_call_text").execute();
}
