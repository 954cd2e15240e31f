import type { TinyChatShape } from "./model-init.js";
import type { TrainSchedule } from "./train-loop.js";

/** Everything `npm run model:build` decides, besides where it writes. */
export interface TinyChatRecipe {
  seed: number;
  shape: TinyChatShape;
  bpeVocabSize: number;
  schedule: TrainSchedule;
  dtype: "f32" | "f16" | "bf16";
  /** Kernel threads. Part of the recipe: the thread count may change the float rounding of some reductions. */
  threads: number;
  evalExamplesPerTask: number;
}

/** The recipe of the committed flywheel/tiny-chat. */
export const TINY_CHAT_RECIPE: TinyChatRecipe = {
  seed: 1,
  shape: { hiddenSize: 192, numLayers: 4, numHeads: 6, numKvHeads: 2, intermediateSize: 576, maxPositionEmbeddings: 1024 },
  bpeVocabSize: 1000,
  schedule: { steps: 11500, examplesPerStep: 32, peakLearningRate: 3e-3, warmupSteps: 100, finalLearningRateFraction: 0.1, maxSequenceTokens: 1024 },
  dtype: "f16",
  threads: 2,
  evalExamplesPerTask: 200,
};
