import type { SftStepMeasurements } from "../train/step-metrics.js";
import type { SftSequence } from "../train/sft-packing.js";
import type { TrainingRow } from "./training-data.js";
import { packStep } from "./training-data.js";

export interface TrainSchedule {
  steps: number;
  /** Examples (conversations) per optimizer step. */
  examplesPerStep: number;
  peakLearningRate: number;
  /** Linear warm-up from 0, in steps. */
  warmupSteps: number;
  /** The cosine decay ends at this fraction of the peak. */
  finalLearningRateFraction: number;
  /** Longest packed training sequence, in tokens. */
  maxSequenceTokens: number;
}

/** Linear warm-up, then cosine decay to `finalLearningRateFraction` of the peak at the last step. */
export function learningRateAt(step: number, schedule: TrainSchedule): number {
  const { peakLearningRate: peak, warmupSteps, steps, finalLearningRateFraction: floor } = schedule;
  if (step < warmupSteps) return (peak * (step + 1)) / warmupSteps;
  const progress = steps - warmupSteps <= 1 ? 1 : (step - warmupSteps) / (steps - warmupSteps - 1);
  return peak * (floor + (1 - floor) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}

export interface StepReport {
  step: number;
  loss: number;
  learningRate: number;
  gradNorm: number;
  tokens: number;
  trainedTokens: number;
  seconds: number;
}

/** What takes the optimizer steps (a `Trainer`). */
export interface SftStepper {
  sftSequencesStep(batch: { sequences: readonly SftSequence[]; learningRate: number }): SftStepMeasurements | Promise<SftStepMeasurements>;
}

/**
 * SFT over `rows` in order, `examplesPerStep` per step (each row seen once; the caller generates
 * enough): pack the step's rows, take one optimizer step at the scheduled rate, report it.
 */
export async function runTraining(trainer: SftStepper, rows: readonly TrainingRow[], schedule: TrainSchedule, onStep: (report: StepReport) => void): Promise<void> {
  const needed = schedule.steps * schedule.examplesPerStep;
  if (rows.length < needed) throw new RangeError(`${schedule.steps} steps of ${schedule.examplesPerStep} examples need ${needed} rows, got ${rows.length}`);
  for (let step = 0; step < schedule.steps; step++) {
    const batch = rows.slice(step * schedule.examplesPerStep, (step + 1) * schedule.examplesPerStep);
    const learningRate = learningRateAt(step, schedule);
    const result = await trainer.sftSequencesStep({ sequences: packStep(batch, schedule.maxSequenceTokens), learningRate });
    onStep({ step, loss: result.loss, learningRate, gradNorm: result.gradNorm, tokens: result.numTokens, trainedTokens: result.numTrainableTokens, seconds: result.seconds });
  }
}
