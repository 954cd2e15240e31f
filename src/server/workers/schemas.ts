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
