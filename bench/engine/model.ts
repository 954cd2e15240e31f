import fs from "node:fs";
import path from "node:path";
import { makeTinyModel } from "../../src/engine/fixtures/tiny-model.js";
import { exportGguf } from "../../src/engine/gguf/export.js";

export type BenchDType = "f16" | "bf16";

/** Qwen2.5-0.5B's shapes (its config.json), with the fixture tokenizer and random weights. */
export const QWEN25_05B_SHAPES = {
  hiddenSize: 896,
  numLayers: 24,
  numHeads: 14,
  numKvHeads: 2,
  headDim: 64,
  intermediateSize: 4864,
  vocabSize: 151_936,
  maxPositionEmbeddings: 32_768,
  tieWordEmbeddings: true,
} as const;

export interface BenchModel {
  dir: string;
  gguf: string;
  /** Ids the fixture tokenizer defines; prompts draw from these. */
  tokenizerSize: number;
}

/**
 * The benchmark model, made once and cached: a qwen2 checkpoint with Qwen2.5-0.5B's shapes in
 * Hugging Face layout, and its GGUF export for llama.cpp. The embedding has 151,936 rows, far more
 * than the fixture tokenizer defines; the export names the extra rows `[PAD<id>]` (type UNUSED), as
 * llama.cpp's own converter does for padded vocabularies.
 */
export function ensureBenchModel(cacheDir: string, dtype: BenchDType, log: (line: string) => void): BenchModel {
  const dir = path.join(cacheDir, `qwen2.5-0.5b-shapes-${dtype}`);
  const done = path.join(dir, ".complete");
  const gguf = path.join(dir, "model.gguf");
  if (!fs.existsSync(done)) {
    log(`making a random model with Qwen2.5-0.5B's shapes in ${dtype} (once; cached in ${path.relative(process.cwd(), dir)})`);
    fs.rmSync(dir, { recursive: true, force: true });
    const model = makeTinyModel(dir, { architecture: "qwen2", dtype, seed: 1, ...QWEN25_05B_SHAPES });
    log(`exporting it to GGUF`);
    exportGguf(dir, gguf, { name: "qwen2.5-0.5b-shapes" });
    fs.writeFileSync(done, JSON.stringify({ tokenizerSize: model.tokenizerSize }));
  }
  const { tokenizerSize } = JSON.parse(fs.readFileSync(done, "utf8")) as { tokenizerSize: number };
  return { dir, gguf, tokenizerSize };
}
