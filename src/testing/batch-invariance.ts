import { describe, expect, it } from "vitest";
import { encodeFloats, type FloatDType } from "../engine/checkpoint/dtype.js";
import { SeededRandom } from "../engine/fixtures/random.js";
import type { AttentionShape, Kernels } from "../engine/kernels/types.js";

/** Row counts that reach every tile height and path switch of the backends, two row blocks, and more. */
const ROW_COUNTS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 24, 33, 64, 300];

/** Fails unless `actual` and `expected` hold the same f32 bit patterns, naming the first difference. */
export function expectSameBits(actual: Float32Array, expected: Float32Array, what: string): void {
  expect(actual.length, what).toBe(expected.length);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const b = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) expect.fail(`${what}: element ${i} is ${actual[i]}, expected ${expected[i]} (bit for bit)`);
  }
}

/** Batches of `rows` rows taken from a pool of `pool` rows: at the start and at the end of the pool. */
function batches(pool: number): [number, number][] {
  return ROW_COUNTS.filter((rows) => rows <= pool).flatMap((rows): [number, number][] =>
    rows === pool
      ? [[0, rows]]
      : [
          [0, rows],
          [pool - rows, rows],
        ],
  );
}

/**
 * Batch invariance, which greedy decoding and prefix reuse rely on (a request gives the same
 * numbers alone, in a batch, in prefill chunks or after a prefix-cache hit) and which lets the
 * trainer recompute exactly the logprobs the sampler returned: every kernel computes each row
 * bit for bit the same whatever the number of rows in the call and the row's place in it.
 */
export function describeBatchInvariance(name: string, makeKernels: () => Kernels): void {
  describe(`${name} kernels compute each row independently of its batch`, () => {
    const kernels = makeKernels();
    const random = new SeededRandom(1234);

    it.each(["F32", "F16", "BF16"] as FloatDType[])("matmul on %s weights: a row alone equals that row in calls of any size", (dtype) => {
      // A ragged last panel with a bias; and one large enough to be split over threads and row blocks.
      for (const [inDim, outDim, withBias] of [
        [203, 37, true],
        [256, 300, false],
      ] as const) {
        const w = kernels.createMatrix(outDim, inDim, dtype, encodeFloats(dtype, random.uniform(outDim * inDim, 1)));
        const bias = withBias ? random.uniform(outDim, 0.5) : undefined;
        const pool = 300;
        const x = random.uniform(pool * inDim, 1);
        const alone = new Float32Array(pool * outDim);
        for (let r = 0; r < pool; r++) kernels.matmul(alone.subarray(r * outDim, (r + 1) * outDim), x.subarray(r * inDim, (r + 1) * inDim), 1, w, bias);
        for (const [first, rows] of batches(pool)) {
          const out = new Float32Array(rows * outDim);
          kernels.matmul(out, x.subarray(first * inDim, (first + rows) * inDim), rows, w, bias);
          expectSameBits(out, alone.subarray(first * outDim, (first + rows) * outDim), `${inDim}→${outDim}, rows ${first}..${first + rows - 1}`);
        }
      }
    });

    it("rmsNorm and rope: a row alone equals that row in calls of any size", () => {
      for (const dim of [896, 203]) {
        const pool = 300;
        const x = random.uniform(pool * dim, 3);
        const weight = random.uniform(dim, 0.5, 1);
        const alone = new Float32Array(pool * dim);
        for (let r = 0; r < pool; r++) kernels.rmsNorm(alone.subarray(r * dim, (r + 1) * dim), x.subarray(r * dim, (r + 1) * dim), weight, 1, 1e-6);
        for (const [first, rows] of batches(pool)) {
          const out = new Float32Array(rows * dim);
          kernels.rmsNorm(out, x.subarray(first * dim, (first + rows) * dim), weight, rows, 1e-6);
          expectSameBits(out, alone.subarray(first * dim, (first + rows) * dim), `rmsNorm of ${dim}, rows ${first}..${first + rows - 1}`);
        }
      }
      const [heads, headDim, pool] = [6, 64, 300];
      const width = heads * headDim;
      const cos = random.uniform(pool * (headDim / 2), 1);
      const sin = random.uniform(pool * (headDim / 2), 1);
      const positions = Int32Array.from({ length: pool }, (_, i) => (i * 37) % pool);
      const x = random.uniform(pool * width, 2);
      const alone = Float32Array.from(x);
      for (let r = 0; r < pool; r++) kernels.rope({ x: alone.subarray(r * width, (r + 1) * width), rows: 1, heads, headDim, positions: positions.subarray(r, r + 1), cos, sin });
      for (const [first, rows] of batches(pool)) {
        const out = x.slice(first * width, (first + rows) * width);
        kernels.rope({ x: out, rows, heads, headDim, positions: positions.subarray(first, first + rows), cos, sin });
        expectSameBits(out, alone.subarray(first * width, (first + rows) * width), `rope, rows ${first}..${first + rows - 1}`);
      }
    });

    // Head size 64 takes the native kernels' specialized path, 40 the portable one.
    it.each<AttentionShape>([
      { heads: 4, kvHeads: 2, headDim: 64 },
      { heads: 6, kvHeads: 3, headDim: 40 },
    ])("attention: one query alone equals that query among many (heads $heads/$kvHeads of size $headDim)", (shape) => {
      const positions = 120;
      const qWidth = shape.heads * shape.headDim;
      const kvWidth = shape.kvHeads * shape.headDim;
      const keys = random.uniform(positions * kvWidth, 2);
      const values = random.uniform(positions * kvWidth, 1);
      const q = random.uniform(positions * qWidth, 2);
      // Query p alone: the decode step at position p.
      const alone = new Float32Array(positions * qWidth);
      for (let p = 0; p < positions; p++) kernels.attention({ out: alone.subarray(p * qWidth, (p + 1) * qWidth), q: q.subarray(p * qWidth, (p + 1) * qWidth), rows: 1, keys, values, start: p, shape });
      for (const [start, rows] of [
        [0, 1],
        [0, 17],
        [5, 3],
        [9, 8],
        [30, 90],
        [0, 120],
        [119, 1],
      ] as const) {
        const out = new Float32Array(rows * qWidth);
        kernels.attention({ out, q: q.subarray(start * qWidth, (start + rows) * qWidth), rows, keys, values, start, shape });
        expectSameBits(out, alone.subarray(start * qWidth, (start + rows) * qWidth), `queries ${start}..${start + rows - 1}`);
      }
    });

    it("siluMul and addInPlace: an element's result does not depend on the buffer around it", () => {
      const length = 70_001;
      const gate = random.uniform(length, 10);
      const up = random.uniform(length, 2);
      const whole = new Float32Array(length);
      kernels.siluMul(whole, gate, up, length);
      const sum = Float32Array.from(gate);
      kernels.addInPlace(sum, up, length);
      // Every element alone (wherever SIMD blocks, tails or thread chunks put it in the whole), then some runs.
      const single = new Float32Array(1);
      for (let i = 0; i < length; i++) {
        kernels.siluMul(single, gate.subarray(i, i + 1), up.subarray(i, i + 1), 1);
        if (single[0] !== whole[i]) expectSameBits(single, whole.subarray(i, i + 1), `siluMul of element ${i} alone`);
      }
      for (const [first, count] of [
        [0, 1],
        [3, 5],
        [7, 9],
        [8, 16],
        [12_345, 40_000],
        [69_990, 11],
        [1, 70_000],
      ] as const) {
        const part = new Float32Array(count);
        kernels.siluMul(part, gate.subarray(first, first + count), up.subarray(first, first + count), count);
        expectSameBits(part, whole.subarray(first, first + count), `siluMul of elements ${first}..${first + count - 1}`);
        const added = gate.slice(first, first + count);
        kernels.addInPlace(added, up.subarray(first, first + count), count);
        expectSameBits(added, sum.subarray(first, first + count), `addInPlace of elements ${first}..${first + count - 1}`);
      }
    });
  });
}
