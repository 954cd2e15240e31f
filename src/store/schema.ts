import type { TraceObjectTables } from "./trace/schema.js";

/**
 * Row types of every table, one interface per table. Timestamps are ISO-8601 UTC strings
 * (`Date.toISOString()`: fixed width, so they sort as text on both dialects). JSON columns hold
 * JSON text; read them with `decodeJson`.
 */

export interface ApiKeysTable {
  id: string;
  entity: string;
  name: string | null;
  /** sha256 of the key; the key itself is never stored. */
  key_hash: string;
  /** First characters of the key, to recognise it in listings. */
  key_prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export interface ModelsTable {
  id: string;
  entity: string;
  project: string;
  name: string;
  base_model: string;
  run_id: string | null;
  created_at: string;
}

export interface CheckpointsTable {
  id: string;
  model_id: string;
  step: number;
  /** JSON object of metric name → number. */
  metrics: string;
  /** JSON object of file name → blob digest (a PEFT adapter); null for the base weights. */
  files: string | null;
  created_at: string;
}

export interface Database extends TraceObjectTables {
  api_keys: ApiKeysTable;
  models: ModelsTable;
  checkpoints: CheckpointsTable;
}
