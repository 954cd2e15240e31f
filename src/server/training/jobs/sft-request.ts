import type { z } from "zod";
import { TrainingInputError } from "../../../engine/train/errors.js";
import { resolveSftConfig, type SftTrainingConfig } from "../../../engine/train/sft-config.js";
import { findArtifactVersion } from "../../../store/artifacts.js";
import type { BlobStore } from "../../../store/blobs.js";
import type { Store } from "../../../store/db.js";
import type { SftJobInput, WebSftJobInput } from "../../../worker/job-input.js";
import { isWebUrl } from "../../../worker/remote-data.js";
import { parseSftRows, pickSftDataFile, SftDataError } from "../../../worker/sft-data.js";
import { RequestValidationError } from "../../validation.js";
import { parseArtifactUrl } from "../artifacts/artifact-url.js";
import type { SftJobCreateReq } from "./protocol.js";

const URL_LOC = ["body", "training_data_url"];

/**
 * Resolves an SFT request against the artifact store and checks its data: the URL must name a
 * version of the caller's own artifact holding train.jsonl (or trajectories.jsonl) whose every
 * line is a usable conversation, and a learning-rate list must have one entry per batch. Any
 * problem is a 422 naming the field.
 */
export async function resolveSftRequest(store: Store, blobs: BlobStore, entity: string, body: z.output<typeof SftJobCreateReq>): Promise<{ input: SftJobInput; config: SftTrainingConfig | SftJobCreateConfig }> {
  if (isWebUrl(body.training_data_url)) return webSftRequest(body);
  if (/^[a-z][a-z0-9+.-]*:/i.test(body.training_data_url) && !/^(?:wandb-artifact|artifact):/i.test(body.training_data_url)) {
    throw RequestValidationError.single(URL_LOC, `the URL scheme of '${body.training_data_url.slice(0, 100)}' is not accepted: use an artifact (wandb-artifact:///entity/project/name:vN) or an http(s) URL of a train.jsonl`);
  }
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

  let config: SftTrainingConfig;
  try {
    config = resolveSftConfig(body.config, rowCount, body.experimental_config ?? null);
  } catch (error) {
    if (error instanceof TrainingInputError) throw RequestValidationError.single(["body", ...error.loc], error.detail);
    throw error;
  }
  return {
    input: {
      training_data_url: body.training_data_url,
      artifact: { id: artifact.id, entity: artifact.entity, project: artifact.project, name: artifact.name, version: artifact.version },
      data_file: { name: fileName, digest: dataFile.digest },
      metadata_file: metadataFile ? { digest: metadataFile.digest } : null,
      num_rows: rowCount,
    },
    config,
  };
}

type SftJobCreateConfig = z.output<typeof SftJobCreateReq>["config"] | null;

/**
 * An http(s) URL: checked for form here, fetched by the worker when the job runs (so its rows,
 * and the per-batch learning rates they imply, are resolved then; problems end the job with
 * training_failed). The job stores the request's config as given.
 */
function webSftRequest(body: z.output<typeof SftJobCreateReq>): { input: WebSftJobInput; config: SftJobCreateConfig } {
  let url: URL;
  try {
    url = new URL(body.training_data_url.trim());
  } catch {
    throw RequestValidationError.single(URL_LOC, `'${body.training_data_url.slice(0, 200)}' is not a valid URL`);
  }
  if (url.username || url.password) throw RequestValidationError.single(URL_LOC, "the URL must not carry credentials");
  return {
    input: { training_data_url: url.href, web: true, config_request: body.config ?? null, experimental_config: body.experimental_config ?? null },
    config: body.config ?? null,
  };
}
