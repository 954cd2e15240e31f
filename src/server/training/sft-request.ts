import type { z } from "zod";
import { findArtifactVersion } from "../../store/artifacts.js";
import type { BlobStore } from "../../store/blobs.js";
import type { Store } from "../../store/db.js";
import type { SftJobInput } from "../../worker/job-input.js";
import { parseSftRows, pickSftDataFile, SftDataError } from "../../worker/sft-data.js";
import { SFT_CONFIG_DEFAULTS, sftBatchCount, type SftTrainingConfig } from "../../worker/training-config.js";
import { RequestValidationError } from "../validation.js";
import { parseArtifactUrl } from "./artifact-url.js";
import { sftBatchSize } from "./config-schemas.js";
import type { SftJobCreateReq } from "./job-schemas.js";

const URL_LOC = ["body", "training_data_url"];

/**
 * Resolves an SFT request against the artifact store and checks its data: the URL must name a
 * version of the caller's own artifact holding train.jsonl (or trajectories.jsonl) whose every
 * line is a usable conversation, and a learning-rate list must have one entry per batch. Any
 * problem is a 422 naming the field.
 */
export async function resolveSftRequest(
  store: Store,
  blobs: BlobStore,
  entity: string,
  body: z.output<typeof SftJobCreateReq>,
): Promise<{ input: SftJobInput; config: SftTrainingConfig }> {
  const ref = parseArtifactUrl(body.training_data_url);
  if (typeof ref === "string") throw RequestValidationError.single(URL_LOC, ref);
  // Another entity's artifact reads exactly like a missing one.
  const artifact = ref.entity === entity ? await findArtifactVersion(store.db, ref) : undefined;
  if (!artifact) throw RequestValidationError.single(URL_LOC, `artifact '${body.training_data_url}' was not found; upload it with POST /v1/preview/artifacts or flywheel artifacts upload`);

  const fileName = pickSftDataFile(Object.keys(artifact.files));
  if (!fileName) throw RequestValidationError.single(URL_LOC, `artifact v${artifact.version} has no train.jsonl or trajectories.jsonl (files: ${Object.keys(artifact.files).join(", ")})`);
  const dataFile = artifact.files[fileName]!;
  let rowCount: number;
  try {
    rowCount = parseSftRows((await blobs.get(dataFile.digest)).toString("utf8"), fileName).length;
  } catch (error) {
    if (error instanceof SftDataError) throw RequestValidationError.single(URL_LOC, error.message);
    throw error;
  }
  if (rowCount === 0) throw RequestValidationError.single(URL_LOC, `${fileName} has no rows`);

  const metadataFile = artifact.files["metadata.json"];
  if (metadataFile) {
    try {
      JSON.parse((await blobs.get(metadataFile.digest)).toString("utf8"));
    } catch {
      throw RequestValidationError.single(URL_LOC, "metadata.json of the artifact is not valid JSON");
    }
  }

  const batchSize = sftBatchSize(body.config);
  const batches = sftBatchCount(rowCount, batchSize);
  const rate = body.config?.learning_rate ?? SFT_CONFIG_DEFAULTS.learning_rate;
  if (Array.isArray(rate) && rate.length !== batches) {
    throw RequestValidationError.single(
      ["body", "config", "learning_rate"],
      `learning_rate lists ${rate.length} rates but the data makes ${batches} batches (${rowCount} rows, batch_size ${batchSize}); give one rate per batch or a single number`,
    );
  }
  const metricLogging = body.config?.metric_logging;
  return {
    input: {
      training_data_url: body.training_data_url,
      artifact: { id: artifact.id, entity: artifact.entity, project: artifact.project, name: artifact.name, version: artifact.version },
      data_file: { name: fileName, digest: dataFile.digest },
      metadata_file: metadataFile ? { digest: metadataFile.digest } : null,
      num_rows: rowCount,
    },
    config: {
      batch_size: batchSize,
      learning_rates: Array.isArray(rate) ? rate : Array.from({ length: batches }, () => rate),
      assistant_turns: body.config?.assistant_turns ?? SFT_CONFIG_DEFAULTS.assistant_turns,
      metric_logging: metricLogging ? { enabled: metricLogging.enabled ?? false, target_training_step: metricLogging.target_training_step ?? null } : null,
      experimental_config: body.experimental_config ?? {},
    },
  };
}
