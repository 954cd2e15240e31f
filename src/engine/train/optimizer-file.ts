import { decodeFloats, encodeFloats } from "../checkpoint/dtype.js";
import { CheckpointError } from "../checkpoint/errors.js";
import { encodeSafetensors, SafetensorsReader } from "../checkpoint/safetensors.js";
import type { AdamWState, TrainingMode } from "./adamw.js";

/**
 * AdamW moments kept beside a checkpoint's PEFT files, so the next job continues the optimizer
 * where the previous one stopped (ART keeps `optimizer.pt` in its checkpoint directories). A
 * safetensors file: `exp_avg.<i>` and `exp_avg_sq.<i>` for the adapter's i-th parameter tensor (in
 * `LoraAdapter.parameters()` order), the step count and the mode in the metadata. PEFT and vLLM
 * ignore the extra file.
 */
export const OPTIMIZER_STATE_FILE = "optimizer.safetensors";

const FORMAT = "flywheel-adamw-v1";

export function encodeOptimizerState(state: AdamWState): Uint8Array {
  const tensors = state.expAvg.flatMap((expAvg, i) => [
    { name: `exp_avg.${i}`, dtype: "F32" as const, shape: [expAvg.length], data: encodeFloats("F32", expAvg) },
    { name: `exp_avg_sq.${i}`, dtype: "F32" as const, shape: [expAvg.length], data: encodeFloats("F32", state.expAvgSq[i]!) },
  ]);
  return encodeSafetensors(tensors, { format: FORMAT, step: String(state.step), mode: state.mode ?? "none", tensors: String(state.expAvg.length) });
}

/** Reads a file written by `encodeOptimizerState`; a file of any other form is a CheckpointError. */
export function readOptimizerState(file: string): AdamWState {
  const reader = SafetensorsReader.open(file);
  try {
    const { format, step, mode, tensors } = reader.metadata;
    if (format !== FORMAT) throw new CheckpointError(file, "__metadata__.format", `is ${JSON.stringify(format)}, expected "${FORMAT}"`);
    const count = Number(tensors);
    const steps = Number(step);
    if (!Number.isInteger(count) || count < 0) throw new CheckpointError(file, "__metadata__.tensors", "must be a tensor count");
    if (!Number.isInteger(steps) || steps < 0) throw new CheckpointError(file, "__metadata__.step", "must be a step count");
    const read = (name: string) => {
      const tensor = reader.readFloat(name);
      return decodeFloats(tensor.dtype, tensor.data);
    };
    const expAvg: Float32Array[] = [];
    const expAvgSq: Float32Array[] = [];
    for (let i = 0; i < count; i++) {
      expAvg.push(read(`exp_avg.${i}`));
      expAvgSq.push(read(`exp_avg_sq.${i}`));
    }
    return { step: steps, mode: mode === "rl" || mode === "sft" ? (mode as TrainingMode) : null, expAvg, expAvgSq };
  } finally {
    reader.close();
  }
}
