/**
 * Row types of the trace-object tables (migration 004). Timestamps are ISO-8601 UTC strings; JSON
 * columns hold JSON text. Every row carries its `project_id` ("entity/project"), so a tenant is
 * always a prefix of the key.
 */

export interface TraceObjectsTable {
  project_id: string;
  object_id: string;
  digest: string;
  /** Position in the object's history; never reused, even after deletions. */
  version_index: number;
  /** 1 for the newest version that is not deleted, else 0. */
  is_latest: number;
  kind: string;
  base_object_class: string | null;
  leaf_object_class: string | null;
  /** `json.dumps(val, sort_keys=True)`: exactly the text the digest hashes. */
  val_dump: string;
  size_bytes: number;
  wb_user_id: string | null;
  created_at: string;
  deleted_at: string | null;
}

export interface TraceObjectTagsTable {
  project_id: string;
  object_id: string;
  digest: string;
  tag: string;
  created_at: string;
}

export interface TraceObjectAliasesTable {
  project_id: string;
  object_id: string;
  alias: string;
  digest: string;
  created_at: string;
}

export interface TraceTableRowsTable {
  project_id: string;
  digest: string;
  /** `json.dumps(row)` in the row's own key order. */
  val_dump: string;
  size_bytes: number;
}

export interface TraceTablesTable {
  project_id: string;
  digest: string;
  /** JSON array of row digests, in table order. */
  row_digests: string;
  row_count: number;
  created_at: string;
}

export interface TraceFilesTable {
  project_id: string;
  /** Weave's file digest (base64url-style sha256). */
  digest: string;
  /** Hex sha256 of the content in the blob store. */
  blob_sha256: string;
  size_bytes: number;
  created_at: string;
}

export interface TraceAnnotationQueuesTable {
  id: string;
  project_id: string;
  name: string;
  description: string;
  /** JSON array of scorer refs. */
  scorer_refs: string;
  created_by: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface TraceAnnotationQueueItemsTable {
  id: string;
  project_id: string;
  queue_id: string;
  call_id: string;
  call_started_at: string;
  call_ended_at: string | null;
  call_op_name: string;
  call_trace_id: string;
  /** JSON array of display paths. */
  display_fields: string;
  added_by: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface TraceAnnotatorProgressTable {
  item_id: string;
  annotator_id: string;
  project_id: string;
  queue_id: string;
  annotation_state: string;
  created_at: string;
  updated_at: string;
}

export interface TraceObjectTables {
  trace_objects: TraceObjectsTable;
  trace_object_tags: TraceObjectTagsTable;
  trace_object_aliases: TraceObjectAliasesTable;
  trace_table_rows: TraceTableRowsTable;
  trace_tables: TraceTablesTable;
  trace_files: TraceFilesTable;
  trace_annotation_queues: TraceAnnotationQueuesTable;
  trace_annotation_queue_items: TraceAnnotationQueueItemsTable;
  trace_annotator_progress: TraceAnnotatorProgressTable;
}
