import { DEFAULT_LORA_CONFIG } from "../../../engine/lora/config.js";
import { decodeJson } from "../../../store/json.js";
import type { ModelRow } from "../../../store/models.js";

/** A model's LoRA shape in PEFT's names, as stored in `models.lora_config` and shown in the model read. */
export interface LoraSettings {
  r: number;
  lora_alpha: number;
  target_modules: string[] | string;
}

/** Where a fork started, as stored in `models.forked_from`. */
export interface ForkedFrom {
  model_id: string;
  name: string;
  step: number;
}

export const DEFAULT_LORA_SETTINGS: LoraSettings = { r: DEFAULT_LORA_CONFIG.rank, lora_alpha: DEFAULT_LORA_CONFIG.alpha, target_modules: DEFAULT_LORA_CONFIG.targetModules };

/** The LoRA shape a model trains: its own setting, or the default. */
export function loraSettingsOf(model: Pick<ModelRow, "lora_config">): LoraSettings {
  return model.lora_config === null ? DEFAULT_LORA_SETTINGS : decodeJson<LoraSettings>(model.lora_config);
}

/** The model as the registry's responses show it. */
export function modelView(model: ModelRow) {
  return {
    id: model.id,
    entity: model.entity,
    project: model.project,
    name: model.name,
    base_model: model.base_model,
    run_id: model.run_id,
    created_at: model.created_at,
    forked_from: model.forked_from === null ? null : decodeJson<ForkedFrom>(model.forked_from),
    lora_config: loraSettingsOf(model),
  };
}
