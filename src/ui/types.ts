/** Response shapes of the API routes the UI reads (see /openapi.json). */

export interface ProjectList {
  object: "list";
  entity: string;
  data: { name: string; models: number; traces: boolean }[];
}

export interface Model {
  id: string;
  entity: string;
  project: string;
  name: string;
  base_model: string;
  run_id: string | null;
  created_at: string;
}

export interface CursorPage<T> {
  object: "list";
  data: T[];
  has_more: boolean;
  first_id: string;
  last_id: string;
}

export type JobStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";

export interface Job {
  id: string;
  model_id: string;
  kind: "rl" | "sft";
  status: JobStatus;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  error_message: string | null;
  step: number | null;
}

export interface JobEvent {
  id: string;
  type: "training_started" | "gradient_step" | "training_ended" | "training_failed";
  data: Record<string, unknown>;
}

export interface Checkpoint {
  id: string;
  step: number;
  metrics: Record<string, number>;
}

export interface StepMetrics {
  step: number;
  metrics: Record<string, number>;
}

export interface TrajectoryGroupPage {
  object: "list";
  data: { index: number; trajectories: Trajectory[]; exceptions: unknown[] }[];
  total: number;
  offset: number;
  scale_rewards: boolean;
}

export interface Trajectory {
  messages_and_choices?: unknown[];
  tools?: unknown[] | null;
  reward: number;
  advantage: number;
  /** The trainer's recomputed logprobs: item index → one per sampled token; null if not trained. */
  trainer_logprobs?: Record<string, (number | null)[]> | null;
  metrics?: Record<string, number | boolean> | null;
  metadata?: Record<string, unknown> | null;
  logs?: string[] | null;
}

/** A trace call as the trace API returns it. */
export interface TraceCall {
  id: string;
  project_id: string;
  op_name: string;
  display_name?: string | null;
  trace_id: string;
  parent_id?: string | null;
  started_at: string;
  ended_at?: string | null;
  exception?: string | null;
  inputs?: Record<string, unknown>;
  output?: unknown;
  summary?: Record<string, unknown> | null;
  attributes?: Record<string, unknown>;
}
