import type { BlobStore } from "../store/blobs.js";
import { decodeJson } from "../store/json.js";
import type { TrainingJobRow } from "../store/training-jobs.js";
import { parseSftRows, SftDataError } from "./sft-data.js";
import { DEFAULT_REMOTE_DATA_LIMITS, fetchTrainingData, type RemoteDataLimits, webFileName } from "./remote-data.js";
import type { RlWork, SftWork } from "./trainer.js";
import type { RlTrainingConfig } from "../engine/train/config.js";
import { resolveSftConfig, type SftConfigReq, type SftTrainingConfig } from "../engine/train/sft-config.js";
import { TrainingInputError } from "../engine/train/errors.js";
import type { TrajectoryGroup } from "../engine/train/trajectory.js";

/** What an RL job stores as its input: the validated trajectory groups. */
export interface RlJobInput {
  trajectory_groups: TrajectoryGroup[];
}

/** What an SFT job stores: the exact artifact version and file it was validated against, or a web URL. */
export type SftJobInput = ArtifactSftJobInput | WebSftJobInput;

export interface ArtifactSftJobInput {
  training_data_url: string;
  artifact: { id: string; entity: string; project: string; name: string; version: number };
  data_file: { name: string; digest: string };
  metadata_file: { digest: string } | null;
  num_rows: number;
}

/**
 * An SFT job whose data is an http(s) URL: the worker fetches it when the job runs, so the row
 * count, and with it the per-batch learning rates, are only known then. The request's `config`
 * is kept to be resolved against the fetched rows.
 */
export interface WebSftJobInput {
  training_data_url: string;
  web: true;
  config_request: SftConfigReq | null;
  experimental_config: Record<string, unknown> | null;
}

export function isWebSftInput(input: SftJobInput): input is WebSftJobInput {
  return "web" in input && input.web === true;
}

export type JobWork = RlWork | SftWork;

/**
 * Decodes a job's stored input and config; SFT rows are read back from the blob store, or fetched
 * from the web for a web URL (failures are `SftDataError`s).
 */
export async function loadJobWork(job: TrainingJobRow, blobs: BlobStore, web: { limits: RemoteDataLimits; signal?: AbortSignal } = { limits: DEFAULT_REMOTE_DATA_LIMITS }): Promise<JobWork> {
  if (job.kind === "rl") {
    const input = decodeJson<RlJobInput>(job.input);
    return { kind: "rl", groups: input.trajectory_groups, config: decodeJson<RlTrainingConfig>(job.config) };
  }
  const input = decodeJson<SftJobInput>(job.input);
  if (isWebSftInput(input)) return loadWebSftWork(input, web.limits, web.signal);
  const text = (await blobs.get(input.data_file.digest)).toString("utf8");
  const metadata = input.metadata_file ? JSON.parse((await blobs.get(input.metadata_file.digest)).toString("utf8")) : null;
  return { kind: "sft", rows: parseSftRows(text, input.data_file.name), fileName: input.data_file.name, config: decodeJson<SftTrainingConfig>(job.config), metadata };
}

async function loadWebSftWork(input: WebSftJobInput, limits: RemoteDataLimits, signal?: AbortSignal): Promise<SftWork> {
  const text = await fetchTrainingData(input.training_data_url, limits, signal);
  const fileName = webFileName(input.training_data_url);
  const rows = parseSftRows(text, fileName);
  if (rows.length === 0) throw new SftDataError(`${fileName} from ${input.training_data_url} has no rows`);
  try {
    return { kind: "sft", rows, fileName, config: resolveSftConfig(input.config_request, rows.length, input.experimental_config), metadata: null };
  } catch (error) {
    if (error instanceof TrainingInputError) throw new SftDataError(`${error.loc.join(".")}: ${error.detail}`);
    throw error;
  }
}
