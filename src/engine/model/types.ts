import type { Kernels } from "../kernels/types.js";
import type { KvCache } from "./kv-cache.js";

/** The linear layers of a decoder layer, by their Hugging Face (and PEFT target_modules) names. */
export type LinearName = "q_proj" | "k_proj" | "v_proj" | "o_proj" | "gate_proj" | "up_proj" | "down_proj";

/** The linear layers in forward order (also the slot order of per-layer adapter data). */
export const LINEAR_NAMES: readonly LinearName[] = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];

/**
 * A per-sequence change to the linear layers, e.g. a LoRA adapter: after the base layer computed
 * `out` = x Wᵀ + b for one sequence's rows, `apply` adds its delta (for LoRA, scale · (x Aᵀ) Bᵀ,
 * leaving x Aᵀ in `keep` when given: the trainer's backward reads it).
 * Adapters see only their own sequence's rows, so one batch can mix adapters.
 */
export interface LinearAdapter {
  apply(layer: number, name: LinearName, x: Float32Array, out: Float32Array, rows: number, kernels: Kernels, keep?: Float32Array): void;
}

/** Which positions of a sequence need logits. */
export type LogitsSelection = "last" | "all" | "none";

/** One sequence's part of a batched forward pass. */
export interface ForwardSequence {
  /** The sequence's KV cache; the new tokens' keys and values are appended to it. */
  cache: KvCache;
  /** The new tokens (at least one). */
  tokens: ArrayLike<number>;
  /**
   * Position of the first new token; default `cache.length`. A smaller value rewinds the cache to
   * it first (for reusing a prefix); a larger one is an error.
   */
  position?: number;
  /** Default "last" (decoding, or prefill before sampling); "all" for prompt logprobs. */
  logits?: LogitsSelection;
  adapter?: LinearAdapter;
}
