import type { LoraAdapter } from "../lora/adapter.js";
import { adapterFiles, saveLoraAdapter } from "../lora/files.js";
import type { Transformer } from "../model/transformer.js";
import { Trainer, type TrainerOptions } from "./trainer.js";

export type LoraTrainerOptions = TrainerOptions;

/**
 * A `Trainer` of one LoRA adapter (the base weights frozen), with the adapter's PEFT files:
 * what training jobs checkpoint and serve.
 */
export class LoraTrainer extends Trainer {
  declare readonly adapter: LoraAdapter;

  constructor(transformer: Transformer, adapter: LoraAdapter, options: LoraTrainerOptions = {}) {
    super(transformer, adapter, options);
  }

  /** Writes the adapter in PEFT layout (`adapter_config.json` + `adapter_model.safetensors`). */
  saveAdapter(dir: string): void {
    saveLoraAdapter(dir, this.adapter);
  }

  /** The adapter's PEFT files in memory (file name → bytes), e.g. for a blob store. */
  adapterFiles(): Record<string, Uint8Array> {
    return adapterFiles(this.adapter);
  }
}
