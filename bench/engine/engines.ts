/** What the benchmark asks of an engine; times are seconds of wall clock. */
export interface BenchEngine {
  readonly name: string;
  /** Greedy continuation of `prompt` (for checking that two engines run the same model). */
  greedy(prompt: number[], count: number): Promise<number[]>;
  /** Next-token logits after `prompt`, for the tokens listed. */
  logits(prompt: number[], tokens: number[]): Promise<number[]>;
  /** Prefills all but the last prompt token untimed, then times `steps` greedy decode steps. */
  decode(prompt: number[], steps: number): Promise<number>;
  /** The same for several sequences decoding together; every step yields one token per sequence. */
  decodeTogether(prompts: number[][], steps: number): Promise<number>;
  /** Times the evaluation of a whole prompt into an empty cache. */
  prefill(prompt: number[]): Promise<number>;
  close(): Promise<void>;
}

export function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}

export function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}
