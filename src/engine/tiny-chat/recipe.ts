import type { TinyChatShape } from "./model-init.js";
import type { TrainSchedule } from "./train-loop.js";

/** Everything `npm run model:build` decides, besides where it writes. */
export interface TinyChatRecipe {
  seed: number;
  shape: TinyChatShape;
  bpeVocabSize: number;
  schedule: TrainSchedule;
  dtype: "f32" | "f16" | "bf16";
  /** Data-parallel training threads. Part of the recipe: the thread count changes the float rounding of summed gradients. */
  threads: number;
  evalExamplesPerTask: number;
}

/** The recipe of the committed flywheel/tiny-chat. */
export const TINY_CHAT_RECIPE: TinyChatRecipe = {
  seed: 1,
  shape: { hiddenSize: 128, numLayers: 4, numHeads: 4, numKvHeads: 2, intermediateSize: 384, maxPositionEmbeddings: 1024 },
  bpeVocabSize: 1000,
  schedule: { steps: 2400, examplesPerStep: 16, peakLearningRate: 4e-3, warmupSteps: 60, finalLearningRateFraction: 0.1, maxSequenceTokens: 512 },
  dtype: "f16",
  threads: 2,
  evalExamplesPerTask: 100,
};
