import { describe, expect, it } from "vitest";
import { compactRows, expandRows } from "./selected-rows.js";

const rowsOf = (buffer: Float32Array, width: number) => Array.from({ length: buffer.length / width }, (_, r) => Array.from(buffer.subarray(r * width, (r + 1) * width)));

describe("compactRows / expandRows", () => {
  it("move the selected rows to the front and back, zeroing the rest", () => {
    const width = 2;
    const buffer = Float32Array.from({ length: 6 * width }, (_, i) => i + 1);
    const selected = Int32Array.of(1, 2, 4);
    compactRows(buffer, selected, width);
    expect(rowsOf(buffer, width).slice(0, 3)).toEqual([
      [3, 4],
      [5, 6],
      [9, 10],
    ]);
    expandRows(buffer, selected, width, 6);
    expect(rowsOf(buffer, width)).toEqual([
      [0, 0],
      [3, 4],
      [5, 6],
      [0, 0],
      [9, 10],
      [0, 0],
    ]);
  });

  it("gathers from another buffer, leaving it as it was", () => {
    const from = Float32Array.of(1, 2, 3, 4);
    const buffer = new Float32Array(4);
    compactRows(buffer, Int32Array.of(0, 3), 1, from);
    expect(Array.from(buffer)).toEqual([1, 4, 0, 0]);
    expect(Array.from(from)).toEqual([1, 2, 3, 4]);
  });

  it("leave rows that are all selected where they are, and zero every row when none is", () => {
    const buffer = Float32Array.of(1, 2, 3);
    expandRows(buffer, Int32Array.of(0, 1, 2), 1, 3);
    expect(Array.from(buffer)).toEqual([1, 2, 3]);
    expandRows(buffer, new Int32Array(0), 1, 2);
    expect(Array.from(buffer)).toEqual([0, 0, 3]);
  });
});
