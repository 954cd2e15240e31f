import { rlLossOptions, klReferenceStep } from "../../engine/train/config.js";
import { jobRandom, planRlJob, planSftJob } from "../../engine/train/job/plan.js";
import type { ModelFiles } from "../../engine/model/load.js";
import type { PackedRow } from "../../engine/train/packing.js";
import type { SftRow } from "../../engine/train/sft-tokenize.js";
import { checkpointMetricHistory } from "../../store/checkpoints.js";
import type { Store } from "../../store/db.js";
import type { TrainingJobRow } from "../../store/training-jobs.js";
import type { JobWork } from "../../worker/job-input.js";

/**
 * A job as an external trainer runs it: every optimizer step's rows already tokenized, packed and
 * labelled by the same planner as the built-in trainer (`planRlJob`, `planSftJob`), with each step's
 * learning rate and the loss settings. The trainer only runs forward, loss, backward and AdamW, so
 * both trainers see the same tokens. Arrays hold a row's real positions only (no padding); a missing
 * sampled logprob is null.
 */
export interface JobPlan {
  job_id: string;
  kind: "rl" | "sft";
  base_model: string;
  base_step: number;
  /** The weights the KL penalty compares against: none, the base model, or an adapter (`adapters/reference/...`). */
  kl_reference: null | "base" | "adapter";
  rl?: {
    loss: ReturnType<typeof rlLossOptions>;
    precalculate_logprobs: boolean;
    group_counts: Record<string, number>;
    steps: { learning_rate: number; row: PlanRow }[];
  };
  sft?: { steps: { learning_rate: number; rows: { tokens: number[]; labels: number[] }[] }[] };
}

export interface PlanRow {
  tokens: number[];
  group_ids: number[];
  parent_ids: number[];
  input_pos: number[];
  assistant_mask: number[];
  logprobs: (number | null)[];
  advantages: number[];
  weights: number[];
}

/** Which KL reference a job has, from its config and the step it trains from (null step: the base weights). */
export function klReferenceOf(work: JobWork, baseStep: number): number | null | undefined {
  return work.kind === "rl" ? klReferenceStep(work.config, baseStep) : undefined;
}

export async function buildJobPlan(store: Store, job: TrainingJobRow, work: JobWork, model: ModelFiles, baseModel: string, klReference: JobPlan["kl_reference"]): Promise<JobPlan> {
  const baseStep = job.base_step ?? 0;
  const plan: JobPlan = { job_id: job.id, kind: work.kind, base_model: baseModel, base_step: baseStep, kl_reference: klReference };
  if (work.kind === "sft") {
    plan.sft = { steps: planSftJob(model, work).map((batch) => ({ learning_rate: batch.learningRate, rows: batch.rows.map(sftRow) })) };
    return plan;
  }
  const history = work.config.scale_learning_rate_by_reward_std_dev ? await checkpointMetricHistory(store.db, job.model_id, "train/reward_std_dev", baseStep) : [];
  const rl = planRlJob(model, { ...work, rewardStdDevHistory: history }, jobRandom(job.id));
  plan.rl = {
    loss: rlLossOptions(work.config),
    precalculate_logprobs: work.config.precalculate_logprobs,
    group_counts: rl.groupCounts,
    steps: rl.rows.map((row, index) => ({ learning_rate: rl.learningRates[index]!, row: planRow(row) })),
  };
  return plan;
}

export function planRow(row: PackedRow): PlanRow {
  const n = row.length;
  const ints = (values: ArrayLike<number>) => Array.from(values).slice(0, n);
  return {
    tokens: ints(row.tokens),
    group_ids: ints(row.groupIds),
    parent_ids: ints(row.parentIds),
    input_pos: ints(row.inputPos),
    assistant_mask: ints(row.assistantMask),
    logprobs: Array.from(row.logprobs.slice(0, n), (value) => (Number.isNaN(value) ? null : value)),
    advantages: ints(row.advantages),
    weights: ints(row.weights),
  };
}

export function sftRow(row: SftRow): { tokens: number[]; labels: number[] } {
  return { tokens: Array.from(row.tokens), labels: Array.from(row.labels) };
}
