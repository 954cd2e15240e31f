import { Rng } from "../sampling/rng.js";

/** The seeded choices the task generators make (xoshiro128** through `Rng`, the same on every platform). */
export class TaskRandom {
  private readonly rng: Rng;

  constructor(seed: number | bigint) {
    this.rng = Rng.fromSeed(seed);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return this.rng.nextUint32() % n;
  }

  /** An integer in [low, high]. */
  between(low: number, high: number): number {
    return low + this.int(high - low + 1);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("cannot pick from an empty list");
    return items[this.int(items.length)]!;
  }

  chance(probability: number): boolean {
    return this.rng.nextFloat() < probability;
  }

  /** Fisher–Yates, in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

/** FNV-1a over the UTF-16 code units of a string: a stable 32-bit hash for split assignment. */
export function stableHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}
