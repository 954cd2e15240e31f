import type { Kysely } from "kysely";
import type { AdapterRef } from "../../../engine/api.js";
import type { ModelCatalog } from "../../../engine/catalog.js";
import type { BlobStore } from "../../../store/blobs.js";
import { materializeCheckpoint } from "../../../store/checkpoint-files.js";
import { getCheckpointByStep, latestCheckpoint } from "../../../store/checkpoints.js";
import { findModelByName, findModelsNamed, type ModelRow } from "../../../store/models.js";
import type { Database } from "../../../store/schema.js";
import { ApiError } from "../../errors.js";
import { chatRuleError, modelNotFound } from "../common/chat-errors.js";
import { type ModelName, parseModelName, type TrainedModelName } from "../../model-names.js";

/** What a request's `model` resolves to: the base weights the engine runs, plus an adapter for trained models. */
export interface ResolvedModel {
  baseModelId: string;
  /** The `model` field of responses: the base id, or the trained-model name as the caller wrote it. */
  responseModel: string;
  trained: boolean;
  adapter?: AdapterRef;
}

/** The request's model name, classified without touching the database (trained-model defaults need only the syntax). */
export interface ModelRequest {
  requested: string;
  parsed: ModelName | undefined;
}

export interface ModelResolverDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  dataDir: string;
  catalog: Pick<ModelCatalog, "get" | "list">;
}

/** An absent or empty `model` means the served base model when exactly one is served (vLLM's default). */
export function classifyModelName(model: string | null | undefined, catalog: ModelResolverDeps["catalog"]): ModelRequest {
  if (model === null || model === undefined || model === "") {
    const served = catalog.list();
    if (served.length === 1) return { requested: served[0]!.id, parsed: { kind: "base", id: served[0]!.id } };
    return { requested: "", parsed: undefined };
  }
  return { requested: model, parsed: parseModelName(model, (id) => catalog.get(id) !== undefined) };
}

/**
 * Looks the name up in the caller's entity. Another entity's model answers exactly like an unknown
 * one (404). A model without checkpoints, and step 0 without a stored checkpoint, serve the base
 * weights (ART reads step 0 before any training); any other unknown step is a 404.
 */
export async function resolveModel(request: ModelRequest, entity: string, deps: ModelResolverDeps): Promise<ResolvedModel> {
  const { parsed, requested } = request;
  if (requested === "") {
    const ids = deps.catalog.list().map((entry) => entry.id);
    throw chatRuleError(`\`model\` must be set: this server serves ${ids.length === 0 ? "no model" : `several models (${ids.join(", ")})`}.`, { param: "model" });
  }
  if (!parsed) throw modelNotFound(requested);
  if (parsed.kind === "base") return { baseModelId: parsed.id, responseModel: parsed.id, trained: false };

  const model = await findTrainedModel(parsed, entity, deps.db);
  if (!model) throw modelNotFound(requested);
  if (!deps.catalog.get(model.base_model)) {
    throw new ApiError(404, `The base model \`${model.base_model}\` of \`${requested}\` is not served.`, { param: "model", type: "NotFoundError" });
  }
  const checkpoint = parsed.step === "latest" ? await latestCheckpoint(deps.db, model.id) : await getCheckpointByStep(deps.db, model.id, parsed.step);
  if (!checkpoint && parsed.step !== "latest" && parsed.step !== 0) throw modelNotFound(requested);
  const resolved: ResolvedModel = { baseModelId: model.base_model, responseModel: requested, trained: true };
  if (!checkpoint) return resolved;
  const dir = await materializeCheckpoint(deps.blobs, deps.dataDir, checkpoint);
  return dir ? { ...resolved, adapter: { id: checkpoint.id, dir } } : resolved;
}

async function findTrainedModel(name: TrainedModelName, entity: string, db: Kysely<Database>): Promise<ModelRow | undefined> {
  if (name.kind === "artifact") {
    return name.entity === entity ? findModelByName(db, entity, name.project, name.name) : undefined;
  }
  const candidates = await findModelsNamed(db, entity, name.name);
  if (candidates.length > 1) {
    const projects = candidates.map((candidate) => candidate.project).join(", ");
    throw chatRuleError(`The model name \`${name.name}\` is ambiguous: it exists in projects ${projects}. Use wandb-artifact:///${entity}/<project>/${name.name}:step${name.step}.`, { param: "model" });
  }
  return candidates[0];
}
