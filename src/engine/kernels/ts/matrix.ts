import { decodeFloats, type FloatDType } from "../../checkpoint/dtype.js";
import type { WeightMatrix } from "../types.js";

/** The TS reference keeps every weight as f32 (widened once at load). */
export class F32Matrix implements WeightMatrix {
  readonly dtype = "f32" as const;

  constructor(
    readonly rows: number,
    readonly cols: number,
    readonly data: Float32Array,
  ) {
    if (data.length !== rows * cols) throw new RangeError(`a ${rows}×${cols} matrix needs ${rows * cols} values, got ${data.length}`);
  }

  static fromStored(rows: number, cols: number, dtype: FloatDType, bytes: Uint8Array): F32Matrix {
    return new F32Matrix(rows, cols, decodeFloats(dtype, bytes));
  }
}

export function asF32Matrix(matrix: WeightMatrix): F32Matrix {
  if (!(matrix instanceof F32Matrix)) throw new TypeError("this weight matrix belongs to another kernel backend");
  return matrix;
}
