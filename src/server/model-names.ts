/**
 * The model names `model` accepts (docs/api/chat.md#model-names): a served base model id; a trained
 * model as `wandb-artifact:///entity/project/name` with an optional `:latest` or `:stepN` (two or
 * three slashes; `artifact:` is a synonym of `wandb-artifact:`); ART's local form `name@step`.
 * Parsing is pure (the registry lookup is `chat/models/model-resolver.ts`); chat and training both
 * read names, so the parser sits at the server's root, beside the other code its surfaces share.
 */
export type ModelName = { kind: "base"; id: string } | { kind: "artifact"; entity: string; project: string; name: string; step: number | "latest" } | { kind: "local"; name: string; step: number };

/**
 * A trained-model name: ART's rollouts read logprobs from these by default
 * (`docs/api/training.md#trained-model-logprobs`).
 */
export type TrainedModelName = Exclude<ModelName, { kind: "base" }>;

const ARTIFACT_SCHEME = /^(?:wandb-artifact|artifact):\/\/\/?/;
const ARTIFACT_PATH = /^([^/:@\s]+)\/([^/:@\s]+)\/([^/:@\s]+)(?::(latest|step(\d+)))?$/;
const LOCAL_NAME = /^([A-Za-z0-9][A-Za-z0-9_.-]*)@(\d+)$/;

/**
 * Parses a name; `isBaseModel` decides ids that are served base models (checked first, so a base
 * model whose id happens to contain `@` stays a base model). Returns undefined for a name that
 * matches no form: the caller answers it with the unknown-model 404.
 */
export function parseModelName(name: string, isBaseModel: (id: string) => boolean): ModelName | undefined {
  const scheme = ARTIFACT_SCHEME.exec(name);
  if (scheme) {
    const path = ARTIFACT_PATH.exec(name.slice(scheme[0].length));
    if (!path) return undefined;
    const [, entity, project, modelName, alias, step] = path;
    return { kind: "artifact", entity: entity!, project: project!, name: modelName!, step: alias === undefined || alias === "latest" ? "latest" : safeStep(step!) };
  }
  if (isBaseModel(name)) return { kind: "base", id: name };
  const local = LOCAL_NAME.exec(name);
  if (local) return { kind: "local", name: local[1]!, step: safeStep(local[2]!) };
  return undefined;
}

/** Steps beyond the safe-integer range cannot exist; they parse to -1, which matches no checkpoint. */
function safeStep(digits: string): number {
  const step = Number(digits);
  return Number.isSafeInteger(step) ? step : -1;
}
