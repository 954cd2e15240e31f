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
 * A job's input as read from storage, still undecoded: the job's JSON columns as stored and, for
 * SFT, the data file's text. Reading is I/O only; decoding (`decodeJobWork`) is the CPU work, which
 * then runs off the event loop (`src/server/workers/job-plan-in-thread.ts` for a plan,
 * `job-work-in-thread.ts` for the built-in trainer). Plain data, so it crosses into a thread.
 */
export type StoredJobWork =
  | { kind: "rl"; input: string; config: string }
  | { kind: "sft"; config: string; data: { text: string; fileName: string; metadataText: string | null } }
  | { kind: "sft"; web: WebSftJobInput; data: { text: string; fileName: string } };

/** Reads what `decodeJobWork` needs: the job's columns, and an SFT job's data file (from the blob store or the web). */
export async function readJobWork(job: TrainingJobRow, blobs: BlobStore, web: { limits: RemoteDataLimits; signal?: AbortSignal } = { limits: DEFAULT_REMOTE_DATA_LIMITS }): Promise<StoredJobWork> {
  const columnText = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));
  if (job.kind === "rl") return { kind: "rl", input: columnText(job.input), config: columnText(job.config) };
  const input = decodeJson<SftJobInput>(job.input);
  if (isWebSftInput(input)) {
    const text = await fetchTrainingData(input.training_data_url, web.limits, web.signal);
    return { kind: "sft", web: input, data: { text, fileName: webFileName(input.training_data_url) } };
  }
  const text = (await blobs.get(input.data_file.digest)).toString("utf8");
  const metadataText = input.metadata_file ? (await blobs.get(input.metadata_file.digest)).toString("utf8") : null;
  return { kind: "sft", config: columnText(job.config), data: { text, fileName: input.data_file.name, metadataText } };
}

/** Parses what `readJobWork` read into the job's work (SFT data errors are `SftDataError`s). */
export function decodeJobWork(stored: StoredJobWork): JobWork {
  if (stored.kind === "rl") {
    const input = decodeJson<RlJobInput>(stored.input);
    return { kind: "rl", groups: input.trajectory_groups, config: decodeJson<RlTrainingConfig>(stored.config) };
  }
  if ("web" in stored) return decodeWebSftWork(stored.web, stored.data.text, stored.data.fileName);
  const { text, fileName, metadataText } = stored.data;
  const metadata = metadataText === null ? null : JSON.parse(metadataText);
  return { kind: "sft", rows: parseSftRows(text, fileName), fileName, config: decodeJson<SftTrainingConfig>(stored.config), metadata };
}

function decodeWebSftWork(input: WebSftJobInput, text: string, fileName: string): SftWork {
  const rows = parseSftRows(text, fileName);
  if (rows.length === 0) throw new SftDataError(`${fileName} from ${input.training_data_url} has no rows`);
  try {
    return { kind: "sft", rows, fileName, config: resolveSftConfig(input.config_request, rows.length, input.experimental_config), metadata: null };
  } catch (error) {
    if (error instanceof TrainingInputError) throw new SftDataError(`${error.loc.join(".")}: ${error.detail}`);
    throw error;
  }
}
