import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type BenchEngine, seconds } from "./engines.js";

/** The node-llama-cpp release the benchmark installs (llama.cpp itself comes prebuilt inside it). */
export const NODE_LLAMA_CPP_VERSION = "3.22.1";

/** node-llama-cpp's CPU-only prebuilt binary package for this platform (the GPU ones are skipped). */
function cpuBinaryPackage(): string {
  const platform = { linux: "linux", darwin: "mac", win32: "win" }[process.platform as string];
  if (!platform) throw new Error(`no prebuilt llama.cpp for ${process.platform}`);
  const arch = process.platform === "darwin" && process.arch === "arm64" ? "arm64-metal" : process.arch;
  return `@node-llama-cpp/${platform}-${arch}`;
}

/**
 * Installs node-llama-cpp into a folder of its own (not the project's dependencies: with its GPU
 * builds it weighs about 700 MB). Optional dependencies are omitted and the CPU binary package is
 * named directly, so only the CPU build (about 85 MB) is fetched; its postinstall script (which
 * could download or compile llama.cpp) does not run.
 */
export function ensureNodeLlamaCpp(dir: string, log: (line: string) => void): string {
  const entry = path.join(dir, "node_modules", "node-llama-cpp", "dist", "index.js");
  const binary = cpuBinaryPackage();
  const wanted = { name: "flywheel-bench-llama-cpp", private: true, dependencies: { "node-llama-cpp": NODE_LLAMA_CPP_VERSION, [binary]: NODE_LLAMA_CPP_VERSION } };
  const manifest = path.join(dir, "package.json");
  const current = fs.existsSync(manifest) ? fs.readFileSync(manifest, "utf8") : "";
  if (fs.existsSync(entry) && current === `${JSON.stringify(wanted, null, 2)}\n`) return entry;
  log(`installing node-llama-cpp ${NODE_LLAMA_CPP_VERSION} (CPU build only) into ${path.relative(process.cwd(), dir)}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(manifest, `${JSON.stringify(wanted, null, 2)}\n`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["install", "--omit=optional", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, encoding: "utf8" });
  if (result.status !== 0 || !fs.existsSync(entry)) {
    throw new Error(`could not install node-llama-cpp into ${dir}: ${(result.stderr || result.stdout || String(result.error)).trim().split("\n").slice(-5).join(" | ")}`);
  }
  return entry;
}

// The slice of node-llama-cpp's API the benchmark uses (its types are not installed with the project).
interface LlamaModule {
  getLlama(options: Record<string, unknown>): Promise<Llama>;
}
interface Llama {
  loadModel(options: Record<string, unknown>): Promise<LlamaModel>;
  systemInfo: string;
  dispose(): Promise<void>;
}
interface LlamaModel {
  createContext(options: Record<string, unknown>): Promise<LlamaContext>;
  dispose(): Promise<void>;
}
interface LlamaContext {
  getSequence(): LlamaSequence;
  dispose(): Promise<void>;
}
interface LlamaSequence {
  evaluate(tokens: number[], options: Record<string, unknown>): AsyncGenerator<number>;
  evaluateWithoutGeneratingNewTokens(tokens: number[]): Promise<void>;
  controlledEvaluate(input: unknown[]): Promise<({ next?: { logits?: Map<number, number> } } | undefined)[]>;
  dispose(): void;
}

/** llama.cpp through node-llama-cpp on the CPU, with the same thread count as Flywheel. */
export class LlamaCppEngine implements BenchEngine {
  readonly name: string;

  private constructor(
    threads: number,
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    readonly systemInfo: string,
  ) {
    this.name = `llama.cpp, ${threads} thread${threads > 1 ? "s" : ""}`;
  }

  static async load(entry: string, gguf: string, threads: number, maxSequences: number): Promise<LlamaCppEngine> {
    const module = (await import(pathToFileURL(entry).href)) as LlamaModule;
    const llama = await module.getLlama({ gpu: false, build: "never", maxThreads: threads, logLevel: "error", progressLogs: false });
    const model = await llama.loadModel({ modelPath: gguf, gpuLayers: 0 });
    const context = await model.createContext({ contextSize: 4096, sequences: maxSequences, batchSize: 512, threads: { ideal: threads, min: threads } });
    return new LlamaCppEngine(threads, llama, model, context, llama.systemInfo);
  }

  async greedy(prompt: number[], count: number): Promise<number[]> {
    return this.withSequence(async (sequence) => {
      const out: number[] = [];
      for await (const token of sequence.evaluate(prompt, { temperature: 0 })) {
        out.push(token);
        if (out.length === count) break;
      }
      return out;
    });
  }

  async topLogits(prompt: number[], count: number): Promise<[number, number][]> {
    return this.withSequence(async (sequence) => {
      const last: unknown = [prompt[prompt.length - 1], { generateNext: { logits: { filter: { tokens: [], includeTop: count } } } }];
      const output = await sequence.controlledEvaluate([...prompt.slice(0, -1), last]);
      const logits = output[prompt.length - 1]?.next?.logits;
      if (!logits) throw new Error("llama.cpp returned no logits");
      return [...logits.entries()].sort((a, b) => b[1] - a[1]).slice(0, count);
    });
  }

  async decode(prompt: number[], steps: number): Promise<number> {
    return this.decodeTogether([prompt], steps);
  }

  async decodeTogether(prompts: number[][], steps: number): Promise<number> {
    const sequences = prompts.map(() => this.context.getSequence());
    try {
      await Promise.all(sequences.map((sequence, i) => sequence.evaluateWithoutGeneratingNewTokens(prompts[i]!.slice(0, -1))));
      const start = process.hrtime.bigint();
      // Concurrent generators of one context: node-llama-cpp batches their steps into one llama_decode.
      await Promise.all(
        sequences.map(async (sequence, i) => {
          let generated = 0;
          for await (const _token of sequence.evaluate([prompts[i]!.at(-1)!], { temperature: 0 })) {
            if (++generated === steps) break;
          }
        }),
      );
      return seconds(start);
    } finally {
      for (const sequence of sequences) sequence.dispose();
    }
  }

  async prefill(prompt: number[]): Promise<number> {
    return this.withSequence(async (sequence) => {
      const start = process.hrtime.bigint();
      await sequence.evaluateWithoutGeneratingNewTokens(prompt);
      return seconds(start);
    });
  }

  async close(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }

  private async withSequence<T>(use: (sequence: LlamaSequence) => Promise<T>): Promise<T> {
    const sequence = this.context.getSequence();
    try {
      return await use(sequence);
    } finally {
      sequence.dispose();
    }
  }
}
