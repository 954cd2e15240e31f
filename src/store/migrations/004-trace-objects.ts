import type { Kysely } from "kysely";

/**
 * Trace objects (versions, tags, aliases), tables and their rows, files and annotation queues.
 * Row types: `src/store/trace/schema.ts`. Keys start with project_id so every query of one tenant
 * reads one index range.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("trace_objects")
    .addColumn("project_id", "text", (col) => col.notNull())
    .addColumn("object_id", "text", (col) => col.notNull())
    .addColumn("digest", "text", (col) => col.notNull())
    .addColumn("version_index", "integer", (col) => col.notNull())
    .addColumn("is_latest", "integer", (col) => col.notNull())
    .addColumn("kind", "text", (col) => col.notNull())
    .addColumn("base_object_class", "text")
    .addColumn("leaf_object_class", "text")
    .addColumn("val_dump", "text", (col) => col.notNull())
    .addColumn("size_bytes", "bigint", (col) => col.notNull())
    .addColumn("wb_user_id", "text")
    .addColumn("created_at", "text", (col) => col.notNull())
    .addColumn("deleted_at", "text")
    .addPrimaryKeyConstraint("trace_objects_pk", ["project_id", "object_id", "digest"])
    .addUniqueConstraint("trace_objects_version", ["project_id", "object_id", "version_index"])
    .execute();
  await db.schema.createIndex("trace_objects_project_created").on("trace_objects").columns(["project_id", "created_at", "version_index"]).execute();

  await db.schema
    .createTable("trace_object_tags")
    .addColumn("project_id", "text", (col) => col.notNull())
    .addColumn("object_id", "text", (col) => col.notNull())
    .addColumn("digest", "text", (col) => col.notNull())
    .addColumn("tag", "text", (col) => col.notNull())
    .addColumn("created_at", "text", (col) => col.notNull())
    .addPrimaryKeyConstraint("trace_object_tags_pk", ["project_id", "object_id", "digest", "tag"])
    .execute();
  await db.schema.createIndex("trace_object_tags_project_tag").on("trace_object_tags").columns(["project_id", "tag"]).execute();

  await db.schema
    .createTable("trace_object_aliases")
    .addColumn("project_id", "text", (col) => col.notNull())
    .addColumn("object_id", "text", (col) => col.notNull())
    .addColumn("alias", "text", (col) => col.notNull())
    .addColumn("digest", "text", (col) => col.notNull())
    .addColumn("created_at", "text", (col) => col.notNull())
    .addPrimaryKeyConstraint("trace_object_aliases_pk", ["project_id", "object_id", "alias"])
    .execute();

  await db.schema
    .createTable("trace_table_rows")
    .addColumn("project_id", "text", (col) => col.notNull())
    .addColumn("digest", "text", (col) => col.notNull())
    .addColumn("val_dump", "text", (col) => col.notNull())
    .addColumn("size_bytes", "bigint", (col) => col.notNull())
    .addPrimaryKeyConstraint("trace_table_rows_pk", ["project_id", "digest"])
    .execute();

  await db.schema
    .createTable("trace_tables")
    .addColumn("project_id", "text", (col) => col.notNull())
    .addColumn("digest", "text", (col) => col.notNull())
    .addColumn("row_digests", "text", (col) => col.notNull())
    .addColumn("row_count", "integer", (col) => col.notNull())
    .addColumn("created_at", "text", (col) => col.notNull())
    .addPrimaryKeyConstraint("trace_tables_pk", ["project_id", "digest"])
    .execute();

  await db.schema
    .createTable("trace_files")
    .addColumn("project_id", "text", (col) => col.notNull())
    .addColumn("digest", "text", (col) => col.notNull())
    .addColumn("blob_sha256", "text", (col) => col.notNull())
    .addColumn("size_bytes", "bigint", (col) => col.notNull())
    .addColumn("created_at", "text", (col) => col.notNull())
    .addPrimaryKeyConstraint("trace_files_pk", ["project_id", "digest"])
    .execute();

  await db.schema
    .createTable("trace_annotation_queues")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("project_id", "text", (col) => col.notNull())
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("description", "text", (col) => col.notNull())
    .addColumn("scorer_refs", "text", (col) => col.notNull())
    .addColumn("created_by", "text", (col) => col.notNull())
    .addColumn("created_at", "text", (col) => col.notNull())
    .addColumn("updated_at", "text", (col) => col.notNull())
    .addColumn("deleted_at", "text")
    .execute();
  await db.schema.createIndex("trace_annotation_queues_project").on("trace_annotation_queues").columns(["project_id", "created_at"]).execute();

  await db.schema
    .createTable("trace_annotation_queue_items")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("project_id", "text", (col) => col.notNull())
    .addColumn("queue_id", "text", (col) => col.notNull().references("trace_annotation_queues.id").onDelete("cascade"))
    .addColumn("call_id", "text", (col) => col.notNull())
    .addColumn("call_started_at", "text", (col) => col.notNull())
    .addColumn("call_ended_at", "text")
    .addColumn("call_op_name", "text", (col) => col.notNull())
    .addColumn("call_trace_id", "text", (col) => col.notNull())
    .addColumn("display_fields", "text", (col) => col.notNull())
    .addColumn("added_by", "text")
    .addColumn("created_by", "text", (col) => col.notNull())
    .addColumn("created_at", "text", (col) => col.notNull())
    .addColumn("updated_at", "text", (col) => col.notNull())
    .addColumn("deleted_at", "text")
    .addUniqueConstraint("trace_annotation_queue_items_call", ["queue_id", "call_id"])
    .execute();
  await db.schema.createIndex("trace_annotation_queue_items_queue").on("trace_annotation_queue_items").columns(["queue_id", "created_at"]).execute();

  await db.schema
    .createTable("trace_annotator_progress")
    .addColumn("item_id", "text", (col) => col.notNull().references("trace_annotation_queue_items.id").onDelete("cascade"))
    .addColumn("annotator_id", "text", (col) => col.notNull())
    .addColumn("project_id", "text", (col) => col.notNull())
    .addColumn("queue_id", "text", (col) => col.notNull())
    .addColumn("annotation_state", "text", (col) => col.notNull())
    .addColumn("created_at", "text", (col) => col.notNull())
    .addColumn("updated_at", "text", (col) => col.notNull())
    .addPrimaryKeyConstraint("trace_annotator_progress_pk", ["item_id", "annotator_id"])
    .execute();
  await db.schema.createIndex("trace_annotator_progress_queue").on("trace_annotator_progress").columns(["queue_id", "annotation_state"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["trace_annotator_progress", "trace_annotation_queue_items", "trace_annotation_queues", "trace_files", "trace_tables", "trace_table_rows", "trace_object_aliases", "trace_object_tags", "trace_objects"]) {
    await db.schema.dropTable(table).execute();
  }
}
