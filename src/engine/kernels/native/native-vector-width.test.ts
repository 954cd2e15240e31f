import { it } from "vitest";
import { expectSameBits } from "../../../testing/batch-invariance.js";
import { describeNative } from "../../../testing/native.js";
import { SeededRandom } from "../../fixtures/random.js";
import { NativeKernels } from "./index.js";

// Kernels with a 512-bit version whose every output keeps the 256-bit version's operations (LoRA's
// products, in axpy and in dot-product form): the same bits at both x86 vector levels.
describeNative("native kernels at AVX-512 against AVX2", (addon) => {
  it.runIf(addon.bestSimd === "avx512")("gemm in axpy form (LoRA's B product, dB) gives the same bits at both widths", () => {
    const [wide, narrow] = (["avx512", "avx2"] as const).map((simd) => new NativeKernels(addon, { threads: 2, simd }));
    const random = new SeededRandom(3);
    // n: below 8, multiples of 8 and 16 and 64, and ragged; k includes zero coefficients (skipped).
    for (const n of [5, 8, 24, 64, 77, 200, 704, 1000]) {
      for (const [m, k] of [
        [1, 8],
        [37, 16],
      ] as const) {
        const a = random.uniform(m * k, 1);
        a[3] = 0;
        const b = random.uniform(k * n, 1);
        const initial = random.uniform(m * n, 1);
        const [c512, c256] = [Float32Array.from(initial), Float32Array.from(initial)];
        wide!.gemm(c512, a, b, m, n, k, { alpha: 2, accumulate: true });
        narrow!.gemm(c256, a, b, m, n, k, { alpha: 2, accumulate: true });
        expectSameBits(c512, c256, `gemm ${m}×${n}×${k}`);
        // dB of a LoRA factor: a transposed, few columns of c.
        const [t512, t256] = [new Float32Array(k * 8), new Float32Array(k * 8)];
        const x = random.uniform(m * k, 1);
        const g = random.uniform(m * 8, 1);
        wide!.gemm(t512, x, g, k, 8, m, { transposeA: true });
        narrow!.gemm(t256, x, g, k, 8, m, { transposeA: true });
        expectSameBits(t512, t256, `gemm dB ${k}×8×${m}`);
      }
    }
    // Dot-product form (x·A of LoRA: few columns, a long k): k below 8, one 8-float block, pairs
    // of blocks with and without a last block, ragged tails; columns in fours and a remainder.
    for (const k of [5, 13, 24, 77, 256, 704]) {
      for (const n of [5, 7, 8]) {
        const m = 19;
        const a = random.uniform(m * k, 1);
        const b = random.uniform(n * k, 1);
        const [c512, c256] = [new Float32Array(m * n), new Float32Array(m * n)];
        wide!.gemm(c512, a, b, m, n, k, { transposeB: true, alpha: 0.5 });
        narrow!.gemm(c256, a, b, m, n, k, { transposeB: true, alpha: 0.5 });
        expectSameBits(c512, c256, `gemm ${m}×${n}×${k}, b transposed`);
      }
    }
  });
});
