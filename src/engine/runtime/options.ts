/** How one engine schedules its requests. Every field has a default (`resolveSchedulerOptions`). */
export interface SchedulerOptions {
  /** Admit waiting requests by `priority` (lower first, then arrival) instead of arrival order. */
  priorityScheduling: boolean;
  /** Most sequences (choices, beams) decoding at once. */
  maxRunningSequences: number;
  /** Most tokens one forward pass takes: every decoding sequence's next token, then prompt chunks. */
  maxTokensPerStep: number;
  /** Bytes of KV cache the running sequences may hold; over it, the latest request is preempted. */
  kvCacheBytes: number;
  /** Bytes of KV cache kept for prefix reuse (least recently used dropped first); 0 disables it. */
  prefixCacheBytes: number;
  /** Loaded LoRA adapters kept per engine (least recently used dropped first). */
  maxLoadedAdapters: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_SCHEDULER_OPTIONS: SchedulerOptions = {
  priorityScheduling: false,
  maxRunningSequences: 32,
  maxTokensPerStep: 512,
  kvCacheBytes: 2048 * MIB,
  prefixCacheBytes: 512 * MIB,
  maxLoadedAdapters: 8,
};

/** Fills defaults and checks the values; throws a RangeError naming the bad option. */
export function resolveSchedulerOptions(options: Partial<SchedulerOptions> = {}): SchedulerOptions {
  const given = withoutUndefined(options);
  const resolved = { ...DEFAULT_SCHEDULER_OPTIONS, ...given };
  // The default step budget grows to fit a larger number of running sequences.
  if (given.maxTokensPerStep === undefined) resolved.maxTokensPerStep = Math.max(resolved.maxTokensPerStep, resolved.maxRunningSequences);
  const positive = ["maxRunningSequences", "maxTokensPerStep", "kvCacheBytes", "maxLoadedAdapters"] as const;
  for (const name of positive) {
    if (!Number.isInteger(resolved[name]) || resolved[name] < 1) throw new RangeError(`${name} must be a positive integer, got ${resolved[name]}`);
  }
  if (!Number.isInteger(resolved.prefixCacheBytes) || resolved.prefixCacheBytes < 0) {
    throw new RangeError(`prefixCacheBytes must be a non-negative integer, got ${resolved.prefixCacheBytes}`);
  }
  // Every decoding sequence takes one token of each step, so they must all fit in one.
  if (resolved.maxTokensPerStep < resolved.maxRunningSequences) {
    throw new RangeError(`maxTokensPerStep (${resolved.maxTokensPerStep}) must be at least maxRunningSequences (${resolved.maxRunningSequences})`);
  }
  return resolved;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
