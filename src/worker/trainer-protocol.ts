/**
 * The order a trainer reports in, wherever it runs (a trainer thread, or an external worker over
 * the worker protocol): one `started` with num_sequences = N, exactly N gradient steps, then the
 * checkpoint. Anything else is a protocol error, which fails the job.
 */
export class TrainerProtocolError extends Error {
  constructor(message: string) {
    super(`trainer protocol error: ${message}`);
  }
}

/** What a job has reported so far: N from `started` (undefined before it) and the gradient steps. */
export interface TrainerProgress {
  announced: number | undefined;
  steps: number;
}

export function checkStarted(progress: TrainerProgress, numSequences: unknown): number {
  if (progress.announced !== undefined) throw new TrainerProtocolError("started twice");
  if (typeof numSequences !== "number" || !Number.isInteger(numSequences) || numSequences < 0) throw new TrainerProtocolError("num_sequences must be a non-negative integer");
  return numSequences;
}

export function checkGradientStep(progress: TrainerProgress): void {
  if (progress.announced === undefined) throw new TrainerProtocolError("a gradient step before started");
  if (progress.steps + 1 > progress.announced) throw new TrainerProtocolError(`more than the announced ${progress.announced} gradient steps`);
}

export function checkFinished(progress: TrainerProgress): void {
  if (progress.announced === undefined || progress.steps !== progress.announced) {
    throw new TrainerProtocolError(`finished after ${progress.steps} of ${progress.announced ?? "?"} gradient steps`);
  }
}

/** gradient_step data must be numbers (ART converts every value with float()); NaN and ±∞ cannot be sent as JSON. */
export function finiteMetrics(metrics: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(metrics)) {
    if (typeof value !== "number") throw new TrainerProtocolError(`metric '${key}' is not a number`);
    if (Number.isFinite(value)) out[key] = value;
  }
  return out;
}
