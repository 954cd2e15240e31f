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
  /** "user": the public APIs; "worker": only the worker protocol (`src/server/workers/`). */
  role: ApiKeyRole;
}

export type ApiKeyRole = "user" | "worker";

/** An external training worker, as it last asked for jobs. */
export interface TrainingWorkersTable {
  /** The worker's lease owner id (`remote:<key id>:<name>`). */
  id: string;
  key_id: string;
  /** JSON array of the base model ids it trains. */
  base_models: string;
  last_seen_at: string;
}

export interface ModelsTable {
  id: string;
  entity: string;
  project: string;
  name: string;
  base_model: string;
  run_id: string | null;
  created_at: string;
  /** JSON `{model_id, name, step}`: the checkpoint this model was forked from; null for a model of its own. */
  forked_from: string | null;
  /** JSON `{r, lora_alpha, target_modules}`: the adapter this model trains; null for the default (rank 8, alpha 16, all linear layers). */
  lora_config: string | null;
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

export type TrainingJobKind = "rl" | "sft";
export type TrainingJobStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";

export interface TrainingJobsTable {
  id: string;
  entity: string;
  /** Plain text, not a foreign key: a job stays readable after its model is deleted. */
  model_id: string;
  kind: TrainingJobKind;
  status: TrainingJobStatus;
  /** Submission order within the model (1, 2, …); jobs of one model run in this order. */
  position: number;
  /** JSON: what the job trains on (RL trajectory groups, or the resolved SFT artifact). */
  input: string;
  /** JSON: the resolved training configuration (every default filled in). */
  config: string;
  /** sha256 of the request, to compare requests that share an Idempotency-Key. */
  request_hash: string;
  idempotency_key: string | null;
  /** How many times a worker has claimed the job. */
  attempts: number;
  /** The worker holding the lease while the job runs; null otherwise. */
  lease_owner: string | null;
  lease_expires_at: string | null;
  /** The worker that claimed the job last (kept after the job ends, for diagnostics). */
  last_worker: string | null;
  /** The checkpoint step the job trains from, fixed when it starts (0 = base weights). */
  base_step: number | null;
  /** The checkpoint step of the KL reference, fixed when the job starts. */
  kl_reference_step: number | null;
  /** The checkpoint step the job committed (base_step + 1) once it succeeded. */
  result_step: number | null;
  error_message: string | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
}

export interface TrainingJobEventsTable {
  id: string;
  job_id: string;
  /** 1, 2, … within the job: the order the client reads events in. */
  seq: number;
  type: string;
  /** JSON object. */
  data: string;
  created_at: string;
}

/** The trainer's recomputed logprobs of one sampled turn of an RL job (`store/token-logprobs.ts`). */
export interface TrainingJobTokenLogprobsTable {
  job_id: string;
  group_index: number;
  trajectory_index: number;
  /** The turn's index in the trajectory's messages_and_choices. */
  item_index: number;
  /** Base64 of little-endian float32s, one per sampled token (NaN: not scored). */
  logprobs: string;
}

export interface ArtifactsTable {
  id: string;
  entity: string;
  project: string;
  name: string;
  /** 0, 1, … per (entity, project, name): the `vN` of the artifact URL. */
  version: number;
  type: string;
  /** JSON object of file name → {digest, size}. */
  files: string;
  /** JSON object. */
  metadata: string;
  created_at: string;
}

export interface StoredResponsesTable {
  /** `resp_…` */
  id: string;
  entity: string;
  model: string;
  /** JSON list of chat messages: the conversation up to and including this response's output. */
  conversation: string;
  /** JSON: the response object as it was returned. */
  body: string;
  created_at: string;
}

export interface Database extends TraceObjectTables {
  api_keys: ApiKeysTable;
  models: ModelsTable;
  checkpoints: CheckpointsTable;
  training_jobs: TrainingJobsTable;
  training_job_events: TrainingJobEventsTable;
  training_job_token_logprobs: TrainingJobTokenLogprobsTable;
  artifacts: ArtifactsTable;
  stored_responses: StoredResponsesTable;
  training_workers: TrainingWorkersTable;
}
