import { z } from "zod";

/** A worker's own name for itself (host:pid, a pod name); its leases are held as `remote:<key id>:<name>`. */
export const WorkerName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_.:@-]+$/, "use letters, digits and _ . : @ -")
  .describe("The worker's own name (e.g. host:pid); the same on every call about the jobs it holds");

export const WorkerJobParams = z.object({ job_id: z.string().min(1).max(100) });
export const WorkerQuery = z.object({ worker: WorkerName });

export const ClaimReq = z.object({
  worker: WorkerName,
  base_models: z.array(z.string().min(1).max(300)).min(1).max(1000).describe("Base model ids this worker can train (it has their weights or downloads them)"),
});

export const ClaimedJob = z.object({
  id: z.string(),
  kind: z.enum(["rl", "sft"]),
  model: z.object({ id: z.string(), entity: z.string(), project: z.string(), name: z.string(), base_model: z.string() }),
  base_step: z.number().int().describe("The checkpoint step the job trains from (0: the base weights); the new checkpoint is base_step + 1"),
  lease_seconds: z.number().describe("The lease; heartbeat well within it (e.g. every third)"),
});

export const ClaimRes = z.object({ job: ClaimedJob.nullable().describe("null: no job for these base models now; ask again later") });

export const HeartbeatReq = z.object({ worker: WorkerName });
export const HeartbeatRes = z.object({
  owned: z.boolean().describe("false: stop at once; the job was cancelled, taken back or ended, and nothing more of it is accepted"),
  status: z.string(),
  message: z.string().nullable(),
});

export const EventReq = z.object({
  worker: WorkerName,
  type: z.enum(["training_started", "gradient_step"]),
  data: z.record(z.string(), z.unknown()).describe("training_started: {num_sequences}; gradient_step: numeric metrics"),
});
export const EventRes = z.object({ id: z.string() });

export const AdapterFileName = z.enum(["adapter_config.json", "adapter_model.safetensors", "optimizer.safetensors"]);
export const UploadParams = WorkerJobParams.extend({ name: AdapterFileName });
export const UploadRes = z.object({ name: z.string(), digest: z.string(), size: z.number().int() });

export const CheckpointReq = z.object({
  worker: WorkerName,
  files: z
    .partialRecord(AdapterFileName, z.string().regex(/^[0-9a-f]{64}$/, "a sha256 digest from the upload"))
    .nullable()
    .describe("File name → digest of the uploaded adapter files; null: nothing was trained, the new step keeps the weights"),
});
export const CheckpointRes = z.object({ step: z.number().int() });

export const FailReq = z.object({ worker: WorkerName, message: z.string().min(1).max(10_000) });
export const ReleaseReq = z.object({ worker: WorkerName });
export const ReleaseRes = z.object({ outcome: z.enum(["requeued", "failed"]).nullable() });

export const AdapterParams = WorkerJobParams.extend({ which: z.enum(["start", "reference"]), name: AdapterFileName });

export const BaseModelQuery = z.object({ base_model: z.string().min(1).max(300) });
export const BaseModelFileQuery = BaseModelQuery.extend({ name: z.string().min(1).max(300) });
export const BaseModelFilesRes = z.object({ files: z.array(z.object({ name: z.string(), size: z.number().int() })) });

/** One packed RL row of a plan: token-aligned arrays of the same length. */
const PlanRowRes = z.object({
  tokens: z.array(z.int()),
  group_ids: z.array(z.int()),
  parent_ids: z.array(z.int()),
  input_pos: z.array(z.int()),
  assistant_mask: z.array(z.int()),
  logprobs: z.array(z.number().nullable()),
  advantages: z.array(z.number()),
  weights: z.array(z.number()),
});

/** A held job's plan (`JobPlan`): what a remote trainer runs, step by step. */
export const JobPlanRes = z.object({
  job_id: z.string(),
  kind: z.enum(["rl", "sft"]),
  base_model: z.string(),
  base_step: z.int().min(0),
  kl_reference: z.enum(["base", "adapter"]).nullable(),
  rl: z
    .object({
      loss: z.object({
        objective: z.enum(["cispo", "ppo"]),
        epsilon: z.number(),
        epsilonHigh: z.number(),
        importanceSamplingLevel: z.enum(["token", "sequence", "average", "geometric_average"]),
        maxImportanceSamplingWeight: z.number().nullable(),
        maskProbRatio: z.boolean(),
        kimiK2Tau: z.number().nullable(),
        klPenaltyCoef: z.number(),
        klPenaltySource: z.enum(["current_learner", "sample"]),
        truncatedImportanceSampling: z.number().nullable(),
      }),
      precalculate_logprobs: z.boolean(),
      group_counts: z.record(z.string(), z.int()),
      steps: z.array(z.object({ learning_rate: z.number(), row: PlanRowRes })),
    })
    .optional(),
  sft: z.object({ steps: z.array(z.object({ learning_rate: z.number(), rows: z.array(z.object({ tokens: z.array(z.int()), labels: z.array(z.int()) })) })) }).optional(),
});

export const FailRes = z.object({ status: z.literal("failed") });

/** Files a worker downloads as they are stored. */
export const FILE_BYTES = { mediaType: "application/octet-stream", description: "The file's bytes" };
