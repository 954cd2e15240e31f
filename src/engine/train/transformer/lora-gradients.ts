import type { LoraAdapter, LoraModule } from "../../lora/adapter.js";
import { LINEAR_NAMES } from "../../model/types.js";
import type { LinearName } from "../../model/types.js";

/** dLoss/dA and dLoss/dB of every module of one adapter, in `adapter.parameters()` order. */
export class LoraGradients {
  /** A then B of each module, aligned with `adapter.parameters()` (what AdamW and clipGradNorm take). */
  readonly tensors: Float32Array[];
  private readonly byModule = new Map<LoraModule, { a: Float32Array; b: Float32Array }>();

  constructor(readonly adapter: LoraAdapter) {
    this.tensors = [];
    for (const module of adapter.modules()) {
      const pair = { a: new Float32Array(module.a.length), b: new Float32Array(module.b.length) };
      this.byModule.set(module, pair);
      this.tensors.push(pair.a, pair.b);
    }
  }

  /** The gradient pair of the adapter's module at (layer, name), if it has one. */
  of(module: LoraModule): { a: Float32Array; b: Float32Array } {
    const pair = this.byModule.get(module);
    if (!pair) throw new Error(`module ${module.name} of layer ${module.layer} is not part of this adapter`);
    return pair;
  }

  zero(): void {
    for (const tensor of this.tensors) tensor.fill(0);
  }

  /** For tests and debugging: the gradient of one named factor. */
  get(layer: number, name: LinearName, factor: "A" | "B"): Float32Array | undefined {
    if (!LINEAR_NAMES.includes(name)) return undefined;
    const module = this.adapter.module(layer, name);
    const pair = module && this.byModule.get(module);
    return pair && (factor === "A" ? pair.a : pair.b);
  }
}
