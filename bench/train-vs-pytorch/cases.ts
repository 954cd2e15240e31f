import type { TinyModelOptions } from "../../src/engine/fixtures/tiny-model.js";
import { QWEN25_05B_SHAPES } from "../engine/model.js";

/** What one side runs on one case: the spec both bench/train_peft.py and flywheel-side.ts read. */
export interface RowsSpec {
  /** Equal-length token rows, one optimizer step over all of them. */
  rows: number[][];
  /** The first promptLength tokens of each row are prompt; the loss covers the rest. */
  promptLength: number;
  /** "lora": rank-8 LoRA on all linear layers, base frozen; "full": every weight trains. */
  mode: "lora" | "full";
  /** "step": forward + backward + clipping + AdamW; "score": forward only, logprob and entropy of every next token. */
  measures: ("step" | "score")[];
  warmup: number;
  steps: number;
  learningRate: number;
  lora: { rank: number; alpha: number; targetModules: string[] };
}

export interface BenchCase {
  name: string;
  what: string;
  /** `flywheel models make-tiny` options of the checkpoint (always f32, seed 1). */
  model: TinyModelOptions;
  /** The equivalent make-tiny command-line flags, for the report. */
  makeTinyFlags: string;
  mode: RowsSpec["mode"];
  measures: RowsSpec["measures"];
  /** Rows per step and tokens per row, full and quick. */
  rows: { full: [number, number]; quick: [number, number] };
  /**
   * Untimed steps first, then timed ones. Both sides take a few steps to settle (allocator,
   * JIT, caches): on tiny-chat PyTorch's first steps took 398, 133, 109 ms before 80–90, and
   * Flywheel's 274, 59, 56 ms before 40–45 (2 threads), so one warm-up step timed the settling.
   */
  warmup: { full: number; quick: number };
  steps: { full: number; quick: number };
  /** Large: left out by --skip-large. */
  large?: boolean;
}

export const LORA = { rank: 8, alpha: 16, targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] };

export const CASES: BenchCase[] = [
  {
    name: "tiny-chat",
    what: "tiny-chat's shape (models/flywheel/tiny-chat), full-parameter SFT step",
    model: { architecture: "qwen2", hiddenSize: 128, numLayers: 4, numHeads: 4, numKvHeads: 2, intermediateSize: 384, vocabSize: 1024, maxPositionEmbeddings: 1024, tieWordEmbeddings: true },
    makeTinyFlags: "--arch qwen2 --hidden 128 --layers 4 --heads 4 --kv-heads 2 --intermediate 384 --vocab 1024 --max-positions 1024 --tie-embeddings true",
    mode: "full",
    measures: ["step"],
    rows: { full: [8, 128], quick: [4, 64] },
    warmup: { full: 3, quick: 1 },
    steps: { full: 7, quick: 2 },
  },
  {
    name: "qwen2-4m",
    what: "the ~4M-parameter qwen2 of issue 10, LoRA SFT step and forward-only scoring",
    model: { architecture: "qwen2", hiddenSize: 256, numLayers: 4, numHeads: 8, numKvHeads: 4, intermediateSize: 704, vocabSize: 2048 },
    makeTinyFlags: "--arch qwen2 --hidden 256 --layers 4 --heads 8 --kv-heads 4 --intermediate 704 --vocab 2048",
    mode: "lora",
    measures: ["step", "score"],
    rows: { full: [2, 512], quick: [2, 128] },
    warmup: { full: 3, quick: 1 },
    steps: { full: 5, quick: 1 },
  },
  {
    name: "qwen2.5-0.5b",
    what: "Qwen2.5-0.5B's shapes, LoRA SFT step on a 512-token row",
    model: { architecture: "qwen2", ...QWEN25_05B_SHAPES },
    makeTinyFlags: "--arch qwen2 --hidden 896 --layers 24 --heads 14 --kv-heads 2 --intermediate 4864 --vocab 151936 --max-positions 32768 --tie-embeddings true",
    mode: "lora",
    measures: ["step"],
    rows: { full: [1, 512], quick: [1, 128] },
    warmup: { full: 1, quick: 1 },
    steps: { full: 2, quick: 1 },
    large: true,
  },
];
