/**
 * Training jobs on the engine side: `runTrainingJob(model, spec)` steps one job (RL or SFT) from
 * its starting checkpoint to the files of the next one. The trainer thread (`../thread/`) runs it
 * off the event loop; the job system (`src/worker/`) builds the spec.
 */
export * from "./run-training-job.js";
export * from "./types.js";
