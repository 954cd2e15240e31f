import { klReferenceStep, type RlTrainingConfig, rlLossOptions } from "../../engine/train/config.js";
import { jobRandom, planRlJob, planSftJob } from "../../engine/train/job/plan.js";
import type { StepValue } from "../../engine/train/learning-rate.js";
import type { ModelFiles } from "../../engine/model/load.js";
import type { PackedRow } from "../../engine/train/packing.js";
import type { SftRow } from "../../engine/train/sft-tokenize.js";
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
export function klReferenceOf(kind: JobWork["kind"], config: unknown, baseStep: number): number | null | undefined {
  return kind === "rl" ? klReferenceStep(config as RlTrainingConfig, baseStep) : undefined;
}

/** What a plan is made from besides the job's work: all plain data (it crosses into the planning thread). */
export interface JobPlanContext {
  jobId: string;
  baseModel: string;
  baseStep: number;
  klReference: JobPlan["kl_reference"];
  /** `train/reward_std_dev` of the model's earlier steps (read only when the config scales by it). */
  rewardStdDevHistory: StepValue[];
}

/** Plans a job: pure CPU work over the job's decoded work and the model's tokenizer and template. */
export function planJob(model: ModelFiles, work: JobWork, context: JobPlanContext): JobPlan {
  const plan: JobPlan = { job_id: context.jobId, kind: work.kind, base_model: context.baseModel, base_step: context.baseStep, kl_reference: context.klReference };
  if (work.kind === "sft") {
    plan.sft = { steps: planSftJob(model, work).map((batch) => ({ learning_rate: batch.learningRate, rows: batch.rows.map(sftRow) })) };
    return plan;
  }
  const rl = planRlJob(model, { ...work, rewardStdDevHistory: context.rewardStdDevHistory }, jobRandom(context.jobId));
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
