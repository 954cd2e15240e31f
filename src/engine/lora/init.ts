import type { ModelConfig } from "../checkpoint/model-config.js";
import { Rng } from "../sampling/rng.js";
import { LoraAdapter } from "./adapter.js";
import { DEFAULT_LORA_CONFIG, type LoraConfig } from "./config.js";

export interface NewLoraOptions extends Partial<LoraConfig> {
  /** Seeds A; the same seed and shapes give the same adapter. Default 0. */
  seed?: number;
}

/**
 * A fresh adapter initialised as PEFT does (`init_lora_weights=True`): A from
 * kaiming_uniform(a=√5), i.e. uniform in ±1/√in, and B zero, so the adapted model equals the base
 * model until the first update. Defaults: rank 8, alpha 16, all seven linear layers of every layer.
 */
export function createLoraAdapter(modelConfig: ModelConfig, options: NewLoraOptions = {}): LoraAdapter {
  const { seed = 0, ...overrides } = options;
  const config: LoraConfig = { ...DEFAULT_LORA_CONFIG, ...overrides };
  const rng = Rng.fromSeed(seed);
  return LoraAdapter.create(config, modelConfig, (module) => {
    // kaiming_uniform_ with a = √5: gain √(2 / (1 + a²)) = √(1/3), bound gain·√(3 / fan_in) = 1/√fan_in.
    const bound = 1 / Math.sqrt(module.inDim);
    for (let i = 0; i < module.a.length; i++) module.a[i] = (2 * rng.nextFloat() - 1) * bound;
  });
}
