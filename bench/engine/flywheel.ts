import type { Kernels } from "../../src/engine/kernels/types.js";
import { loadModel } from "../../src/engine/model/load.js";
import type { Transformer } from "../../src/engine/model/transformer.js";
import { argmax, type BenchEngine, seconds, topOf } from "./engines.js";

/**
 * Flywheel's model core on a kernel backend. Several streams decode as one batched
 * `Transformer.forward` per step, which is what the continuous-batching scheduler issues.
 */
export class FlywheelEngine implements BenchEngine {
  private readonly transformer: Transformer;

  constructor(
    readonly name: string,
    dir: string,
    kernels: Kernels,
  ) {
    this.transformer = loadModel(dir, { kernels }).transformer;
  }

  async greedy(prompt: number[], count: number): Promise<number[]> {
    const cache = this.transformer.createCache();
    const out: number[] = [];
    let next = prompt;
    while (out.length < count) {
      const [logits] = this.transformer.forward([{ cache, tokens: next }]);
      out.push(argmax(logits!));
      next = [out[out.length - 1]!];
    }
    return out;
  }

  async topLogits(prompt: number[], count: number): Promise<[number, number][]> {
    const [logits] = this.transformer.forward([{ cache: this.transformer.createCache(), tokens: prompt }]);
    return topOf(logits!, count);
  }

  async decode(prompt: number[], steps: number): Promise<number> {
    return this.decodeTogether([prompt], steps);
  }

  async decodeTogether(prompts: number[][], steps: number): Promise<number> {
    const caches = prompts.map((prompt) => this.transformer.createCache(prompt.length + steps));
    this.transformer.forward(prompts.map((prompt, i) => ({ cache: caches[i]!, tokens: prompt.slice(0, -1), logits: "none" as const })));
    let next = prompts.map((prompt) => prompt[prompt.length - 1]!);
    const start = process.hrtime.bigint();
    for (let step = 0; step < steps; step++) {
      const logits = this.transformer.forward(next.map((token, i) => ({ cache: caches[i]!, tokens: [token] })));
      next = logits.map((row) => argmax(row!));
    }
    return seconds(start);
  }

  async prefill(prompt: number[]): Promise<number> {
    const cache = this.transformer.createCache(prompt.length);
    const start = process.hrtime.bigint();
    this.transformer.forward([{ cache, tokens: prompt }]);
    return seconds(start);
  }

  async close(): Promise<void> {}
}
