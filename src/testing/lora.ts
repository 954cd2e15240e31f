import { encodeFloats } from "../engine/checkpoint/dtype.js";
import type { F32Matrix } from "../engine/kernels/ts/matrix.js";
import type { LoraAdapter } from "../engine/lora/adapter.js";
import { Transformer } from "../engine/model/transformer.js";
import type { LinearName } from "../engine/model/types.js";
import type { Linear, ModelWeights } from "../engine/model/weights.js";
import { Rng } from "../engine/sampling/rng.js";

const WEIGHT_KEYS: Record<LinearName, "q" | "k" | "v" | "o" | "gate" | "up" | "down"> = {
  q_proj: "q",
  k_proj: "k",
  v_proj: "v",
  o_proj: "o",
  gate_proj: "gate",
  up_proj: "up",
  down_proj: "down",
};

/**
 * The reference for adapter tests: a Transformer (on the TS kernels) whose weights are
 * W + scale·B·A for every module of the adapter, computed in doubles.
 */
export function mergedTransformer(base: Transformer, adapter: LoraAdapter): Transformer {
  const weights: ModelWeights = { ...base.weights, layers: base.weights.layers.map((layer) => ({ ...layer })) };
  for (const module of adapter.modules()) {
    const layer = weights.layers[module.layer]!;
    const key = WEIGHT_KEYS[module.name];
    const linear: Linear = layer[key];
    const data = (linear.weight as F32Matrix).data;
    const merged = new Float32Array(data.length);
    for (let o = 0; o < module.outDim; o++) {
      for (let i = 0; i < module.inDim; i++) {
        let delta = 0;
        for (let j = 0; j < adapter.rank; j++) delta += module.b[o * adapter.rank + j]! * module.a[j * module.inDim + i]!;
        merged[o * module.inDim + i] = data[o * module.inDim + i]! + adapter.scale * delta;
      }
    }
    layer[key] = { ...linear, weight: base.kernels.createMatrix(module.outDim, module.inDim, "F32", encodeFloats("F32", merged)) };
  }
  return new Transformer(base.config, weights, base.kernels);
}

/** Fills every B of the adapter (and rescales A) with seeded noise, so the adapter changes the model. */
export function randomizeAdapter(adapter: LoraAdapter, seed: number, magnitude = 0.5): LoraAdapter {
  const rng = Rng.fromSeed(seed);
  for (const module of adapter.modules()) {
    const bound = magnitude / Math.sqrt(adapter.rank);
    for (let i = 0; i < module.b.length; i++) module.b[i] = (2 * rng.nextFloat() - 1) * bound;
  }
  return adapter;
}
