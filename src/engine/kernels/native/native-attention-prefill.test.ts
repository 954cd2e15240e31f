import { it } from "vitest";
import { expectSameBits } from "../../../testing/batch-invariance.js";
import { describeNative } from "../../../testing/native.js";
import { SeededRandom } from "../../fixtures/random.js";
import { SIMD_LEVELS } from "./addon.js";
import { NativeKernels } from "./index.js";

// Prefill and scoring (many query rows in one call) may run another kernel than decode (one row a
// call): on AVX-512, attention over keys transposed, 16 scores per register. The sampler decodes
// one token at a time and the trainer recomputes whole rows, so the two must agree bit for bit.
describeNative("native attention, many rows at once against one row at a time", (addon) => {
  const levels = SIMD_LEVELS.slice(SIMD_LEVELS.indexOf(addon.bestSimd as (typeof SIMD_LEVELS)[number]));
  const shapes = [
    { heads: 8, kvHeads: 4 },
    { heads: 14, kvHeads: 2 },
    { heads: 3, kvHeads: 1 },
    { heads: 4, kvHeads: 4 },
  ];
  // Row counts around the switch to the transposed kernel (8) and around multiples of 16.
  const spans = [
    { start: 0, rows: 8 },
    { start: 0, rows: 23 },
    { start: 0, rows: 48 },
    { start: 13, rows: 37 },
    { start: 5, rows: 130 },
  ];

  it.each(levels.flatMap((simd) => [32, 64, 128].map((headDim) => ({ simd, headDim }))))("$simd, head size $headDim: every row's output equals decode's bit for bit", ({ simd, headDim }) => {
    const kernels = new NativeKernels(addon, { threads: 2, simd });
    const random = new SeededRandom(headDim);
    for (const { heads, kvHeads } of shapes) {
      const shape = { heads, kvHeads, headDim };
      for (const { start, rows } of spans) {
        const width = start + rows;
        // Scores of a few units and up: softmax weights far from uniform, as in a trained model.
        const q = random.uniform(rows * heads * headDim, 3);
        const keys = random.uniform(width * kvHeads * headDim, 2);
        const values = random.uniform(width * kvHeads * headDim, 1);
        const together = new Float32Array(q.length);
        kernels.attention({ out: together, q, rows, keys, values, start, shape });
        const alone = new Float32Array(q.length);
        const rowWidth = heads * headDim;
        for (let row = 0; row < rows; row++) {
          const slice = (array: Float32Array) => array.subarray(row * rowWidth, (row + 1) * rowWidth);
          kernels.attention({ out: slice(alone), q: slice(q), rows: 1, keys, values, start: start + row, shape });
        }
        expectSameBits(together, alone, `${heads}/${kvHeads} heads, rows ${start}..${width}`);
      }
    }
  });
});
