import { it } from "vitest";
import { expectSameBits } from "../../../testing/batch-invariance.js";
import { describeNative } from "../../../testing/native.js";
import { SeededRandom } from "../../fixtures/random.js";
import type { GemmOptions } from "../types.js";
import { NativeKernels } from "./index.js";

// Kernels with a 512-bit version whose every output keeps the 256-bit version's operations (LoRA's
// products, in axpy and in dot-product form): the same bits at both x86 vector levels and on any
// number of threads.
describeNative("native kernels at AVX-512 against AVX2", (addon) => {
  it.runIf(addon.bestSimd === "avx512")("gemm row by row (LoRA's A and B products) gives the same bits at both widths, on 1 and 2 threads", () => {
    // AVX-512 runs rows four at a time: row counts below, at and past a tile, and enough to share out.
    const [wide, narrow, wideAlone] = [new NativeKernels(addon, { threads: 2, simd: "avx512" }), new NativeKernels(addon, { threads: 2, simd: "avx2" }), new NativeKernels(addon, { threads: 1, simd: "avx512" })];
    const random = new SeededRandom(3);
    const compare = (label: string, m: number, n: number, k: number, a: Float32Array, b: Float32Array, options: GemmOptions) => {
      const initial = random.uniform(m * n, 1);
      const results = [wide, narrow, wideAlone].map((kernels) => {
        const c = Float32Array.from(initial);
        kernels.gemm(c, a, b, m, n, k, options);
        return c;
      });
      expectSameBits(results[0]!, results[1]!, `gemm ${label} ${m}×${n}×${k}`);
      expectSameBits(results[2]!, results[1]!, `gemm ${label} ${m}×${n}×${k}, one thread`);
    };
    // Axpy form (LoRA's B product): n below 8, multiples of 8, 16 and 64, and ragged; rows of zero
    // coefficients (unscored tokens) and a lone zero coefficient, which axpys skips.
    for (const n of [5, 8, 24, 64, 77, 200, 704]) {
      for (const [m, k] of [
        [1, 8],
        [3, 16],
        [6, 8],
        [37, 16],
        [300, 8],
      ] as const) {
        const a = random.uniform(m * k, 1);
        for (let row = 1; row < m; row += 4) a.fill(0, row * k, (row + 1) * k);
        a[3] = 0;
        compare("axpy form", m, n, k, a, random.uniform(k * n, 1), { alpha: 2, accumulate: true });
        compare("axpy form, overwriting", m, n, k, a, random.uniform(k * n, 1), { alpha: 0.5 });
      }
    }
    // Dot-product form (x·Aᵀ of LoRA: few columns, a long k): k below 8, one 8-float block, pairs
    // of blocks with and without a last block, ragged tails; columns in fours and a remainder.
    for (const k of [5, 13, 24, 77, 256, 704]) {
      for (const n of [5, 7, 8, 16]) {
        for (const m of [1, 4, 19, 300]) {
          compare("dot form", m, n, k, random.uniform(m * k, 1), random.uniform(n * k, 1), { transposeB: true, alpha: 0.5 });
          // b as [k × n] (the backward's dy·B), copied into rows of k first.
          compare("dot form, b copied", m, n, k, random.uniform(m * k, 1), random.uniform(k * n, 1), { alpha: 2, accumulate: true });
        }
      }
    }
    // a transposed with neither side of the rank: its rows gathered from its columns, in both forms.
    for (const [m, n, k, transposeB] of [
      [70, 77, 8, false],
      [301, 130, 16, false],
      [70, 66, 100, true],
      [300, 65, 704, true],
    ] as const) {
      const b = random.uniform(k * n, 1);
      compare(`a transposed${transposeB ? ", b transposed" : ""}`, m, n, k, random.uniform(k * m, 1), b, { transposeA: true, transposeB, alpha: 0.5, accumulate: true });
    }
  });

  it.runIf(addon.bestSimd === "avx512")("gemm with a transposed and a side of LoRA's rank (dB, dA) gives the same bits at both widths, on 1 and 2 threads", () => {
    const [wide, narrow, wideAlone] = [new NativeKernels(addon, { threads: 2, simd: "avx512" }), new NativeKernels(addon, { threads: 2, simd: "avx2" }), new NativeKernels(addon, { threads: 1, simd: "avx512" })];
    const random = new SeededRandom(5);
    // The long side: below 8, one and several 32-float blocks, short last blocks and ragged tails;
    // the rank: below, at and above one 8-wide tile; rows: one, a few, and enough to share out.
    for (const long of [5, 24, 77, 200, 704]) {
      for (const rank of [3, 8, 13, 16]) {
        for (const rows of [1, 37, 300]) {
          // Rows with every coefficient zero (unscored tokens) and a lone zero coefficient.
          const zeroRows = (values: Float32Array, width: number) => {
            for (let p = 0; p < rows; p += 3) values.fill(0, p * width, (p + 1) * width);
            values[width + 1] = 0;
            return values;
          };
          for (const [label, m, n, a, b] of [
            // dB: a is dy [rows × long], b the projection [rows × rank].
            ["dB", long, rank, random.uniform(rows * long, 1), zeroRows(random.uniform(rows * rank, 1), rank)],
            // dA: a is dt [rows × rank], b the input [rows × long].
            ["dA", rank, long, zeroRows(random.uniform(rows * rank, 1), rank), random.uniform(rows * long, 1)],
          ] as const) {
            const initial = random.uniform(m * n, 1);
            const results = [wide, narrow, wideAlone].map((kernels) => {
              const c = Float32Array.from(initial);
              kernels.gemm(c, a, b, m, n, rows, { transposeA: true, alpha: 0.5, accumulate: true });
              return c;
            });
            expectSameBits(results[0]!, results[1]!, `gemm ${label} ${m}×${n}×${rows}`);
            expectSameBits(results[2]!, results[1]!, `gemm ${label} ${m}×${n}×${rows}, one thread`);
          }
        }
      }
    }
  });
});
