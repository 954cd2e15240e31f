import type { BlobStore } from "../store/blobs.js";
import { decodeJson } from "../store/json.js";
import type { TrainingJobRow } from "../store/training-jobs.js";
import { parseSftRows } from "./sft-data.js";
import type { RlWork, SftWork } from "./trainer.js";
import type { RlTrainingConfig } from "../engine/train/config.js";
import type { SftTrainingConfig } from "../engine/train/sft-config.js";
import type { TrajectoryGroup } from "./trajectories.js";

/** What an RL job stores as its input: the validated trajectory groups. */
export interface RlJobInput {
  trajectory_groups: TrajectoryGroup[];
}

/** What an SFT job stores: the exact artifact version and file it was validated against. */
export interface SftJobInput {
  training_data_url: string;
  artifact: { id: string; entity: string; project: string; name: string; version: number };
  data_file: { name: string; digest: string };
  metadata_file: { digest: string } | null;
  num_rows: number;
}

export type JobWork = RlWork | SftWork;

/** Decodes a job's stored input and config; SFT rows are read back from the blob store. */
export async function loadJobWork(job: TrainingJobRow, blobs: BlobStore): Promise<JobWork> {
  if (job.kind === "rl") {
    const input = decodeJson<RlJobInput>(job.input);
    return { kind: "rl", trajectoryGroups: input.trajectory_groups, config: decodeJson<RlTrainingConfig>(job.config) };
  }
  const input = decodeJson<SftJobInput>(job.input);
  const text = (await blobs.get(input.data_file.digest)).toString("utf8");
  const metadata = input.metadata_file ? JSON.parse((await blobs.get(input.metadata_file.digest)).toString("utf8")) : null;
  return { kind: "sft", rows: parseSftRows(text, input.data_file.name), fileName: input.data_file.name, config: decodeJson<SftTrainingConfig>(job.config), metadata };
}
