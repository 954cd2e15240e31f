import type { Kysely } from "kysely";
import type { ModelCatalog } from "../../../engine/catalog.js";
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE } from "../../../engine/lora/files.js";
import { getCheckpointByStep, latestCheckpoint } from "../../../store/checkpoints.js";
import { decodeJson } from "../../../store/json.js";
import { findModelByName, type InitialCheckpoint } from "../../../store/models.js";
import type { Database } from "../../../store/schema.js";
import { parseModelName } from "../../model-names.js";
import { RequestValidationError } from "../../validation.js";
import type { ForkedFrom } from "./model-view.js";

/** What a registration's `base_model` names: a served base model, or a checkpoint to fork. */
export interface ModelSource {
  /** The served base model the new model runs on. */
  baseModel: string;
  forkedFrom: ForkedFrom | null;
  /** The fork's step 0 (absent when the checkpoint is the base weights themselves). */
  initial?: InitialCheckpoint;
  /** The parent's `lora_config` column, which a fork inherits. */
  loraConfig: string | null;
}

const LOCATION = ["body", "base_model"];

/**
 * Resolves `base_model` in the caller's entity. A checkpoint name (`wandb-artifact:///e/p/n`,
 * `:stepN` or `:latest`) forks that checkpoint: the new model's step 0 holds its adapter files
 * (the same blobs, nothing copied) but not its optimizer moments, since a fork is a new run.
 * Another entity's checkpoint is as unknown as a missing one.
 */
export async function resolveModelSource(db: Kysely<Database>, catalog: Pick<ModelCatalog, "get" | "list">, entity: string, baseModel: string): Promise<ModelSource> {
  const parsed = parseModelName(baseModel, (id) => catalog.get(id) !== undefined);
  if (parsed?.kind === "base") return { baseModel: parsed.id, forkedFrom: null, loraConfig: null };
  if (parsed?.kind !== "artifact") {
    const served = catalog.list().map((entry) => entry.id);
    throw RequestValidationError.single(
      LOCATION,
      `Base model '${baseModel}' is not served here; served base models: ${served.length > 0 ? served.join(", ") : "(none)"}; or fork a checkpoint: wandb-artifact:///${entity}/<project>/<name>:step<N>`,
    );
  }
  const parent = parsed.entity === entity ? await findModelByName(db, entity, parsed.project, parsed.name) : undefined;
  if (!parent) throw RequestValidationError.single(LOCATION, `No trained model '${parsed.entity}/${parsed.project}/${parsed.name}' to fork in entity '${entity}'`);
  const checkpoint = parsed.step === "latest" ? await latestCheckpoint(db, parent.id) : await getCheckpointByStep(db, parent.id, parsed.step);
  // Step 0 of a model never trained is its base weights, as chat completions serve it.
  if (!checkpoint && parsed.step !== "latest" && parsed.step !== 0) {
    throw RequestValidationError.single(LOCATION, `Model '${parsed.project}/${parsed.name}' has no checkpoint at step ${parsed.step}`);
  }
  if (!catalog.get(parent.base_model)) throw RequestValidationError.single(LOCATION, `The base model '${parent.base_model}' of '${baseModel}' is not served here`);
  const step = checkpoint?.step ?? 0;
  const source: ModelSource = {
    baseModel: parent.base_model,
    forkedFrom: { model_id: parent.id, name: `wandb-artifact:///${entity}/${parent.project}/${parent.name}:step${step}`, step },
    loraConfig: parent.lora_config,
  };
  const files = checkpoint?.files ? decodeJson<Record<string, string>>(checkpoint.files) : null;
  if (files) {
    const adapterFiles: Record<string, string> = {};
    for (const name of [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE]) {
      if (files[name] === undefined) throw RequestValidationError.single(LOCATION, `The checkpoint '${baseModel}' has no ${name}, so it cannot be forked`);
      adapterFiles[name] = files[name];
    }
    source.initial = { files: adapterFiles };
  }
  return source;
}
