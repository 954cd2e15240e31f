import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { expectSameBits } from "../../../testing/batch-invariance.js";
import { describeKernelConformance } from "../../../testing/kernel-conformance.js";
import { describeNative } from "../../../testing/native.js";
import { decodeFloats, encodeFloats, type FloatDType } from "../../checkpoint/dtype.js";
import { SeededRandom } from "../../fixtures/random.js";
import { TsKernels } from "../ts/index.js";
import type { Kernels } from "../types.js";
import { ADDON_PATH } from "../native-loader.js";
import { SIMD_LEVELS } from "./addon.js";
import { NativeKernels } from "./index.js";

/** Largest |a - b| / max(1, |b|): the measure every comparison here uses. */
function worstError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!) / Math.max(1, Math.abs(expected[i]!)));
  return worst;
}

describeNative("native kernels", (addon) => {
  // Every SIMD level this CPU runs, from the best down to the portable loops.
  const levels = SIMD_LEVELS.slice(SIMD_LEVELS.indexOf(addon.bestSimd as (typeof SIMD_LEVELS)[number]));
  it("runs at least the portable level", () => expect(levels).toContain("scalar"));
  for (const simd of levels) describeKernelConformance(`native ${simd}, 2 threads`, () => new NativeKernels(addon, { threads: 2, simd }));
  describeKernelConformance("native, 1 thread", () => new NativeKernels(addon, { threads: 1 }));
  describeKernelConformance("native, 3 threads", () => new NativeKernels(addon, { threads: 3 }));

  // Long rows run in blocks of columns, each output's partial sum kept between them: the same FMA
  // chain as a whole row, so the same bits, on every level, path (direct, widened) and row count.
  // Rows 4 KiB apart (2048 columns) are copied to padded rows first: a row alone is not, and must
  // get the bits it gets among others.
  it.each(levels.flatMap((simd) => (["F32", "BF16"] as FloatDType[]).flatMap((dtype) => [1203, 2048].map((inDim) => ({ simd, dtype, inDim })))))(
    "$simd matmul on $dtype weights, $inDim columns, in blocks of columns gives the bits of whole rows and of rows alone",
    ({ simd, dtype, inDim }) => {
      const random = new SeededRandom(11);
      const outDim = 37;
      const bytes = encodeFloats(dtype, random.uniform(outDim * inDim, 1));
      const bias = random.uniform(outDim, 0.5);
      const [blocked, whole] = [100, 1 << 30].map((matmulDepth) => new NativeKernels(addon, { threads: 2, simd, matmulDepth }));
      const [wBlocked, wWhole] = [blocked!, whole!].map((kernels) => kernels.createMatrix(outDim, inDim, dtype, bytes));
      for (const rows of [1, 5, 17, 40]) {
        const x = random.uniform(rows * inDim, 1);
        for (const withBias of [undefined, bias]) {
          const [a, b] = [new Float32Array(rows * outDim), new Float32Array(rows * outDim)];
          blocked!.matmul(a, x, rows, wBlocked!, withBias);
          whole!.matmul(b, x, rows, wWhole!, withBias);
          expectSameBits(a, b, `${rows} rows${withBias ? ", bias" : ""}`);
          for (let row = 0; row < rows; row++) {
            const alone = new Float32Array(outDim);
            blocked!.matmul(alone, x.subarray(row * inDim, (row + 1) * inDim), 1, wBlocked!, withBias);
            expectSameBits(alone, a.subarray(row * outDim, (row + 1) * outDim), `row ${row} of ${rows} alone`);
          }
        }
        // Accumulating (an input gradient added to dx, through Wᵀ of a [inDim × outDim] weight):
        // every block's chain resumes from dx, the first from its values on entry.
        const [tBlocked, tWhole] = [blocked!, whole!].map((kernels) => kernels.createMatrix(inDim, outDim, dtype, bytes));
        const dy = random.uniform(rows * inDim, 1);
        const start = random.uniform(rows * outDim, 1);
        const [a, b, product] = [start.slice(), start.slice(), new Float32Array(rows * outDim)];
        blocked!.linearBackward({ dx: a, dy, rows, w: tBlocked!, accumulate: true });
        whole!.linearBackward({ dx: b, dy, rows, w: tWhole!, accumulate: true });
        expectSameBits(a, b, `${rows} rows, accumulating`);
        whole!.linearBackward({ dx: product, dy, rows, w: tWhole! });
        // One rounding order against another over up to 2048 terms of ±1.
        expect(
          worstError(
            a,
            product.map((value, i) => value + start[i]!),
          ),
        ).toBeLessThan(5e-5);
      }
    },
  );

  const backends: [string, () => Kernels][] = levels.map((simd) => [simd, () => new NativeKernels(addon, { threads: 2, simd })]);
  describe.each(backends)("against the TypeScript reference (%s)", (_name, make) => {
    const native = make();
    const reference = new TsKernels();
    const random = new SeededRandom(7);

    // Row counts cover every tile height, the direct/widened switches (8 → 9, 16 → 17 rows) and two row blocks (300).
    it.each(["F32", "F16", "BF16"] as FloatDType[])("matmul on %s weights, any row count, ragged panels", (dtype) => {
      const [inDim, outDim] = [203, 37];
      const bytes = encodeFloats(dtype, random.uniform(outDim * inDim, 1));
      const bias = random.uniform(outDim, 0.5);
      const w = native.createMatrix(outDim, inDim, dtype, bytes);
      const wRef = reference.createMatrix(outDim, inDim, dtype, bytes);
      expect(w.dtype).toBe(dtype.toLowerCase());
      for (const rows of [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17, 300]) {
        const x = random.uniform(rows * inDim, 1);
        const out = new Float32Array(rows * outDim);
        const expected = new Float32Array(rows * outDim);
        native.matmul(out, x, rows, w, bias);
        reference.matmul(expected, x, rows, wRef, bias);
        // Native sums in f32 (fused multiply-adds), the reference in f64: over 203 terms, well inside 1e-5.
        expect(worstError(out, expected)).toBeLessThan(1e-5);
      }
    });

    it("embed returns the stored rows exactly, for every dtype", () => {
      for (const dtype of ["F32", "F16", "BF16"] as FloatDType[]) {
        const bytes = encodeFloats(dtype, random.uniform(40 * 19, 3));
        const out = new Float32Array(5 * 19);
        const expected = new Float32Array(5 * 19);
        const ids = [39, 0, 17, 16, 39];
        native.embed(out, native.createMatrix(40, 19, dtype, bytes), ids);
        reference.embed(expected, reference.createMatrix(40, 19, dtype, bytes), ids);
        expect(out).toEqual(expected);
      }
    });

    // Head sizes 64 and 128 take the specialized SIMD kernels, 40 the portable path.
    it.each([
      { heads: 14, kvHeads: 2, headDim: 64 },
      { heads: 8, kvHeads: 4, headDim: 128 },
      { heads: 4, kvHeads: 1, headDim: 40 },
    ])("attention over a long cache, heads $heads/$kvHeads of size $headDim", (shape) => {
      for (const [start, rows] of [
        [0, 1],
        [300, 1],
        [37, 20],
        [2, 3],
      ] as const) {
        const kvWidth = shape.kvHeads * shape.headDim;
        const keys = random.uniform((start + rows) * kvWidth, 2);
        const values = random.uniform((start + rows) * kvWidth, 1);
        const q = random.uniform(rows * shape.heads * shape.headDim, 2);
        const out = new Float32Array(q.length);
        const expected = new Float32Array(q.length);
        native.attention({ out, q, rows, keys, values, start, shape });
        reference.attention({ out: expected, q, rows, keys, values, start, shape });
        expect(worstError(out, expected)).toBeLessThan(1e-5);
      }
    });

    it("rmsNorm, rope, siluMul and addInPlace on prefill-sized buffers (split across threads)", () => {
      const [rows, dim] = [70, 896];
      const x = random.uniform(rows * dim, 4);
      const weight = random.uniform(dim, 0.5, 1);
      const out = new Float32Array(x.length);
      const expected = new Float32Array(x.length);
      native.rmsNorm(out, x, weight, rows, 1e-6);
      reference.rmsNorm(expected, x, weight, rows, 1e-6);
      expect(worstError(out, expected)).toBeLessThan(1e-6);

      const [heads, headDim] = [14, 64];
      const positions = Int32Array.from({ length: rows }, (_, i) => (i * 7) % 50);
      const cos = random.uniform(50 * 32, 1);
      const sin = random.uniform(50 * 32, 1);
      const a = random.uniform(rows * heads * headDim, 2);
      const b = Float32Array.from(a);
      native.rope({ x: a, rows, heads, headDim, positions, cos, sin });
      reference.rope({ x: b, rows, heads, headDim, positions, cos, sin });
      expect(worstError(a, b)).toBeLessThan(1e-6);

      const length = 100_003;
      const gate = random.uniform(length, 12);
      const up = random.uniform(length, 2);
      const silu = new Float32Array(length);
      const siluRef = new Float32Array(length);
      native.siluMul(silu, gate, up, length);
      reference.siluMul(siluRef, gate, up, length);
      expect(worstError(silu, siluRef)).toBeLessThan(1e-6);
      const sum = Float32Array.from(gate);
      const sumRef = Float32Array.from(gate);
      native.addInPlace(sum, up, length);
      reference.addInPlace(sumRef, up, length);
      expect(sum).toEqual(sumRef);
    });
  });

  it("gives bit-identical results with any thread count, and the same matmul sums at both x86 vector levels", () => {
    const random = new SeededRandom(11);
    const [rows, inDim, outDim] = [300, 256, 300];
    const weights = encodeFloats("BF16", random.uniform(outDim * inDim, 1));
    const x = random.uniform(rows * inDim, 1);
    const shape = { heads: 4, kvHeads: 2, headDim: 64 };
    const q = random.uniform(rows * shape.heads * shape.headDim, 2);
    const keys = random.uniform(rows * shape.kvHeads * shape.headDim, 2);
    const values = random.uniform(rows * shape.kvHeads * shape.headDim, 1);
    const long = random.uniform(100_003, 8);
    const run = (kernels: Kernels) => {
      const product = new Float32Array(rows * outDim);
      kernels.matmul(product, x, rows, kernels.createMatrix(outDim, inDim, "BF16", weights));
      const attended = new Float32Array(q.length);
      kernels.attention({ out: attended, q, rows, keys, values, start: 0, shape });
      const normed = new Float32Array(x.length);
      kernels.rmsNorm(normed, x, long.subarray(0, inDim), rows, 1e-6);
      const silu = new Float32Array(long.length);
      kernels.siluMul(silu, long, long, long.length);
      return { product, attended, normed, silu };
    };
    for (const simd of levels) {
      const [one, ...more] = [1, 2, 3].map((threads) => run(new NativeKernels(addon, { threads, simd })));
      for (const other of more) for (const key of Object.keys(one!) as (keyof typeof one)[]) expectSameBits(other[key], one![key], `${simd} ${key}`);
    }
    const vectorLevels = levels.filter((level) => level !== "scalar");
    const products = vectorLevels.map((simd) => run(new NativeKernels(addon, { threads: 2, simd })).product);
    for (const product of products.slice(1)) expectSameBits(product, products[0]!, "matmul, AVX-512 against AVX2");
  });

  // Full-parameter training writes each updated weight back, and its Wᵀ, panel ranges on the pool.
  it.each([1, 3])("writeMatrix replaces every value of W (each dtype) and of an f32 Wᵀ, ragged panels included, on %i threads", (threads) => {
    const context = new addon.Context(threads, "auto");
    const random = new SeededRandom(5);
    for (const [rows, cols] of [
      [37, 5],
      [300, 70],
      [16, 1100],
    ] as const) {
      const values = random.uniform(rows * cols, 1);
      for (const dtype of ["F32", "F16", "BF16"] as FloatDType[]) {
        const w = new addon.Matrix(rows, cols, dtype, encodeFloats(dtype, random.uniform(rows * cols, 1)));
        context.writeMatrix(w, values, false);
        const read = new Float32Array(rows * cols);
        w.read(read);
        expect(Buffer.from(read.buffer).equals(Buffer.from(decodeFloats(dtype, encodeFloats(dtype, values)).buffer))).toBe(true);
      }
      // Wᵀ [cols × rows] from W's values [rows × cols].
      const transposed = new addon.Matrix(new addon.Matrix(rows, cols, "F32", encodeFloats("F32", new Float32Array(rows * cols))), "F32");
      context.writeMatrix(transposed, values, true);
      const read = new Float32Array(rows * cols);
      transposed.read(read);
      const expected = new Float32Array(rows * cols);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) expected[c * rows + r] = values[r * cols + c]!;
      expect(Buffer.from(read.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
    }
    const f16 = new addon.Matrix(2, 3, "F16", new Uint8Array(12));
    expect(() => context.writeMatrix(f16, new Float32Array(6), true)).toThrow(/only an f32 or a paired matrix takes transposed values/);
    expect(() => context.writeMatrix(f16, new Float32Array(5), false)).toThrow(/writeMatrix: values holds 5 values, needs 6/);
  });

  it("runs in worker threads, each with its own pool, and survives their termination", async () => {
    // The engine runs models in worker threads: the addon must load once per thread.
    const code = `
      const { parentPort, workerData } = require("node:worker_threads");
      const addon = require(workerData.path);
      const context = new addon.Context(2, "auto");
      const w = new addon.Matrix(2, 3, "F32", new Uint8Array(new Float32Array([1, 2, 3, 4, 5, 6]).buffer));
      const out = new Float32Array(2);
      context.matmul(out, Float32Array.of(1, 1, 1), 1, w, undefined);
      parentPort.postMessage([...out]);`;
    const results = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<number[]>((resolve, reject) => {
            const worker = new Worker(code, { eval: true, workerData: { path: ADDON_PATH } });
            worker.once("message", (message: number[]) => void worker.terminate().then(() => resolve(message)));
            worker.once("error", reject);
          }),
      ),
    );
    expect(results).toEqual([
      [6, 15],
      [6, 15],
    ]);
  });

  describe("argument checks", () => {
    const kernels = new NativeKernels(addon, { threads: 2 });
    const w = kernels.createMatrix(2, 3, "F32", encodeFloats("F32", new Float32Array(6)));

    it("refuses buffers that are too small, and overlapping matmul buffers", () => {
      expect(() => kernels.matmul(new Float32Array(2), new Float32Array(2), 1, w)).toThrow(/matmul: input holds 2 values, needs 3/);
      expect(() => kernels.matmul(new Float32Array(1), new Float32Array(3), 1, w)).toThrow(/matmul: output holds 1 values, needs 2/);
      expect(() => kernels.matmul(new Float32Array(2), new Float32Array(3), 1, w, new Float32Array(1))).toThrow(/bias holds 1 values/);
      const shared = new Float32Array(8);
      expect(() => kernels.matmul(shared.subarray(2, 4), shared.subarray(0, 3), 1, w)).toThrow(/must not overlap/);
      expect(() => kernels.rmsNorm(new Float32Array(3), new Float32Array(4), new Float32Array(2), 2, 1e-6)).toThrow(/rmsNorm: output holds 3 values/);
      expect(() => kernels.siluMul(new Float32Array(3), new Float32Array(4), new Float32Array(4), 4)).toThrow(/siluMul: output holds 3/);
      expect(() => kernels.attention({ out: new Float32Array(4), q: new Float32Array(4), rows: 1, keys: new Float32Array(2), values: new Float32Array(4), start: 1, shape: { heads: 1, kvHeads: 1, headDim: 4 } })).toThrow(
        /attention: the cache holds fewer than 2 positions/,
      );
      expect(() => kernels.rope({ x: new Float32Array(4), rows: 1, heads: 1, headDim: 4, positions: Int32Array.of(3), cos: new Float32Array(6), sin: new Float32Array(6) })).toThrow(/rope: no table entry for position 3/);
    });

    it("refuses foreign matrices, bad ids and wrongly sized weights", () => {
      expect(() => kernels.matmul(new Float32Array(1), new Float32Array(1), 1, new TsKernels().createMatrix(1, 1, "F32", new Uint8Array(4)))).toThrow(/another kernel backend/);
      expect(() => kernels.embed(new Float32Array(3), w, [2])).toThrow(/token id 2 is outside the embedding \(2 rows\)/);
      expect(() => kernels.embed(new Float32Array(3), w, [0.5])).toThrow(/token id 0.5 is not a valid token id/);
      expect(() => kernels.createMatrix(2, 3, "F16", new Uint8Array(8))).toThrow(/a 2×3 f16 matrix needs 12 bytes, got 8/);
      expect(() => new addon.Context(0, "auto")).toThrow(RangeError);
      expect(() => new addon.Context(1, "gpu" as never)).toThrow(/simd must be/);
      if (addon.bestSimd !== "avx512") expect(() => new addon.Context(1, "avx512")).toThrow(/does not support AVX-512/);
    });

    it("keeps 16-bit weights as stored", () => {
      const half = kernels.createMatrix(3, 4, "BF16", new Uint8Array(24));
      expect(half.dtype).toBe("bf16");
      expect((half as unknown as { handle: { byteLength: number } }).handle.byteLength).toBe(16 * 4 * 2); // one padded panel
    });
  });
});
