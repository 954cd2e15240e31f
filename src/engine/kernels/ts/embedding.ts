import type { F32Matrix } from "./matrix.js";

/** Embedding lookup: each row copies its token's row of the table. */
export function embed(out: Float32Array, table: F32Matrix, ids: ArrayLike<number>): void {
  const { rows: vocab, cols: dim, data } = table;
  for (let r = 0; r < ids.length; r++) {
    const id = ids[r]!;
    if (!(id >= 0 && id < vocab)) throw new RangeError(`token id ${id} is outside the embedding (${vocab} rows)`);
    out.set(data.subarray(id * dim, (id + 1) * dim), r * dim);
  }
}

/** Backward of `embed`: each row's gradient is added to its token's row of the table. */
export function embedBackward(dTable: Float32Array, dOut: Float32Array, ids: ArrayLike<number>, dim: number): void {
  const vocab = dTable.length / dim;
  for (let r = 0; r < ids.length; r++) {
    const id = ids[r]!;
    if (!(id >= 0 && id < vocab)) throw new RangeError(`embedBackward: token id ${id} is outside the table (${vocab} rows)`);
    const to = id * dim;
    const from = r * dim;
    for (let i = 0; i < dim; i++) dTable[to + i] += dOut[from + i]!;
  }
}
