import { randomBytes } from "node:crypto";

/**
 * A small, fast, seedable random number generator (xoshiro128** seeded through SplitMix64).
 * Pure 32-bit integer arithmetic, so a seed gives the same stream on every platform and Node
 * version. Each seeded request gets its own instance; unseeded requests share the engine's one.
 */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  private constructor(words: readonly [number, number, number, number]) {
    [this.s0, this.s1, this.s2, this.s3] = words;
    // xoshiro must never sit in the all-zero state; SplitMix64 practically never yields it, but be sure.
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** A generator for a signed 64-bit seed (any integral JS number or bigint; wraps modulo 2^64). */
  static fromSeed(seed: number | bigint): Rng {
    let state = BigInt.asUintN(64, typeof seed === "bigint" ? seed : BigInt(Math.trunc(seed)));
    const words: number[] = [];
    for (let i = 0; i < 2; i++) {
      state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n);
      const z = splitMix64Finalize(state);
      words.push(Number(z & 0xffffffffn), Number(z >> 32n));
    }
    return new Rng(words as [number, number, number, number]);
  }

  /** A generator seeded from the operating system's entropy (the engine's shared RNG). */
  static fromEntropy(): Rng {
    const bytes = randomBytes(16);
    return new Rng([bytes.readUInt32LE(0), bytes.readUInt32LE(4), bytes.readUInt32LE(8), bytes.readUInt32LE(12)]);
  }

  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform double in [0, 1) with 53 random bits. */
  nextFloat(): number {
    const high = this.nextUint32() >>> 5; // 27 bits
    const low = this.nextUint32() >>> 6; // 26 bits
    return (high * 67108864 + low) / 9007199254740992;
  }
}

/** The seed of choice `index` of a request seeded with `seed` (vLLM: seed + i). */
export function choiceSeed(seed: number, index: number): bigint {
  return BigInt(Math.trunc(seed)) + BigInt(index);
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

function splitMix64Finalize(state: bigint): bigint {
  let z = state;
  z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
  z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
  return z ^ (z >> 31n);
}
