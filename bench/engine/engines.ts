/** What the benchmark asks of an engine; times are seconds of wall clock. */
export interface BenchEngine {
  readonly name: string;
  /** Greedy continuation of `prompt` (for checking that two engines run the same model). */
  greedy(prompt: number[], count: number): Promise<number[]>;
  /** The `count` most likely next tokens after `prompt` with their logits, best first. */
  topLogits(prompt: number[], count: number): Promise<[token: number, logit: number][]>;
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

/** The `count` largest entries of a logits row as [token, logit], largest first. */
export function topOf(row: ArrayLike<number>, count: number): [number, number][] {
  const top: [number, number][] = [];
  for (let i = 0; i < row.length; i++) {
    if (top.length === count && row[i]! <= top[count - 1]![1]) continue;
    top.push([i, row[i]!]);
    top.sort((a, b) => b[1] - a[1]);
    if (top.length > count) top.pop();
  }
  return top;
}

export function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}
