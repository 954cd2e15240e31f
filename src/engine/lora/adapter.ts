import type { ModelConfig } from "../checkpoint/model-config.js";
import type { Kernels } from "../kernels/types.js";
import { LINEAR_NAMES, type LinearAdapter, type LinearName } from "../model/types.js";
import { isTargeted, linearShape, type LoraConfig, loraScale, validateLoraConfig } from "./config.js";

/**
 * The LoRA factors of one linear layer: W' = W + scale · B·A, with A [rank × in] and B
 * [out × rank] row-major, as PEFT stores `lora_A.weight` and `lora_B.weight`.
 */
export interface LoraModule {
  layer: number;
  name: LinearName;
  inDim: number;
  outDim: number;
  a: Float32Array;
  b: Float32Array;
}

/**
 * A PEFT LoRA adapter over one model shape. As a `LinearAdapter` it adds scale · (x Aᵀ) Bᵀ to the
 * output of every adapted linear layer, on the rows of the sequences that use it. The factors are
 * plain f32 arrays the trainer updates in place.
 */
export class LoraAdapter implements LinearAdapter {
  readonly scale: number;
  readonly rank: number;
  /** [layer][index in LINEAR_NAMES]. */
  private readonly byLayer: (LoraModule | undefined)[][];
  private projection = new Float32Array(0);

  constructor(
    readonly config: LoraConfig,
    readonly modelConfig: ModelConfig,
    modules: readonly LoraModule[],
  ) {
    validateLoraConfig(config);
    this.rank = config.rank;
    this.scale = loraScale(config);
    this.byLayer = Array.from({ length: modelConfig.numLayers }, () => new Array<LoraModule | undefined>(LINEAR_NAMES.length));
    for (const module of modules) {
      const { outDim, inDim } = linearShape(modelConfig, module.name);
      if (!(module.layer >= 0 && module.layer < modelConfig.numLayers)) throw new RangeError(`LoRA module for layer ${module.layer}, but the model has ${modelConfig.numLayers} layers`);
      if (module.inDim !== inDim || module.outDim !== outDim || module.a.length !== this.rank * inDim || module.b.length !== outDim * this.rank) {
        throw new RangeError(`LoRA module ${module.name} of layer ${module.layer} does not fit the model: A must be [${this.rank} × ${inDim}] and B [${outDim} × ${this.rank}]`);
      }
      const slot = LINEAR_NAMES.indexOf(module.name);
      if (this.byLayer[module.layer]![slot]) throw new RangeError(`two LoRA modules for ${module.name} of layer ${module.layer}`);
      this.byLayer[module.layer]![slot] = module;
    }
  }

  /** An adapter of `config` on every targeted linear layer, with A from `initA` and B zero (PEFT's init: the identity). */
  static create(config: LoraConfig, modelConfig: ModelConfig, initA: (module: LoraModule) => void): LoraAdapter {
    const modules: LoraModule[] = [];
    for (let layer = 0; layer < modelConfig.numLayers; layer++) {
      for (const name of LINEAR_NAMES) {
        if (!isTargeted(config, layer, name)) continue;
        const { inDim, outDim } = linearShape(modelConfig, name);
        const module = { layer, name, inDim, outDim, a: new Float32Array(config.rank * inDim), b: new Float32Array(outDim * config.rank) };
        initA(module);
        modules.push(module);
      }
    }
    return new LoraAdapter(config, modelConfig, modules);
  }

  module(layer: number, name: LinearName): LoraModule | undefined {
    return this.byLayer[layer]?.[LINEAR_NAMES.indexOf(name)];
  }

  /** Every module in layer order, then forward order within a layer (the parameter order of the optimizer). */
  modules(): LoraModule[] {
    return this.byLayer.flatMap((layer) => layer.filter((module): module is LoraModule => module !== undefined));
  }

  /** The trainable tensors, A then B of each module in `modules()` order. */
  parameters(): Float32Array[] {
    return this.modules().flatMap((module) => [module.a, module.b]);
  }

  apply(layer: number, name: LinearName, x: Float32Array, out: Float32Array, rows: number, kernels: Kernels, keep?: Float32Array): void {
    const module = this.module(layer, name);
    if (!module) return;
    if (!keep && this.projection.length < rows * this.rank) this.projection = new Float32Array(rows * this.rank);
    const projection = keep ?? this.projection;
    this.project(module, x, rows, projection, kernels);
    this.expand(module, projection, rows, out, kernels);
  }

  /** t = x Aᵀ: [rows × rank] from [rows × in]. */
  project(module: LoraModule, x: Float32Array, rows: number, t: Float32Array, kernels: Kernels): void {
    kernels.gemm(t, x, module.a, rows, this.rank, module.inDim, { transposeB: true });
  }

  /** out += scale · t Bᵀ: adds the delta of [rows × rank] projections to [rows × out]. */
  expand(module: LoraModule, t: Float32Array, rows: number, out: Float32Array, kernels: Kernels): void {
    kernels.gemm(out, t, module.b, rows, module.outDim, this.rank, { transposeB: true, alpha: this.scale, accumulate: true });
  }
}
