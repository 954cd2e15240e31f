import type { SftSequence } from "../sft-packing.js";

/** What a replica thread starts with: the checkpoint directory whose weights it trains. */
export interface ReplicaInit {
  dir: string;
}

export type ToReplica =
  /** Replace the gradients with those of these sequences (the token mean over the whole batch's `numTrainableTokens`). */
  | { type: "gradients"; sequences: SftSequence[]; numTrainableTokens: number }
  /** Take the optimizer step with these (summed) gradients. */
  | { type: "step"; gradients: Float32Array[]; learningRate: number }
  | { type: "parameters" }
  | { type: "close" };

export type FromReplica =
  | { type: "ready"; parameterCount: number }
  | { type: "load-failed"; message: string }
  | { type: "gradients"; loss: number; gradients: Float32Array[] }
  | { type: "stepped"; gradNorm: number }
  | { type: "parameters"; parameters: { name: string; shape: number[]; values: Float32Array }[] }
  | { type: "failed"; message: string };
