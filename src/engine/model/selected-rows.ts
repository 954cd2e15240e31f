/**
 * Moving a buffer's selected rows ([rows × width], row-major) to its front and back again, in
 * place. `selected` holds ascending row indices: row `selected[i]` and compacted row i.
 */

/**
 * Copies each selected row of `from` (default: the buffer itself) to the front of `buffer`, row
 * `selected[i]` to row i; ascending, so in place no row is overwritten before it is read.
 */
export function compactRows(buffer: Float32Array, selected: Int32Array, width: number, from = buffer): void {
  for (let i = 0; i < selected.length; i++) {
    const row = selected[i]!;
    if (from !== buffer) buffer.set(from.subarray(row * width, (row + 1) * width), i * width);
    else if (row !== i) buffer.copyWithin(i * width, row * width, (row + 1) * width);
  }
}

/**
 * The inverse of `compactRows` over the first `rows` rows: compacted row i goes back to row
 * `selected[i]` (descending, for the same reason), and every row not selected becomes zeros.
 */
export function expandRows(buffer: Float32Array, selected: Int32Array, width: number, rows: number): void {
  let end = rows;
  for (let i = selected.length - 1; i >= 0; i--) {
    const row = selected[i]!;
    buffer.fill(0, (row + 1) * width, end * width);
    if (row !== i) buffer.copyWithin(row * width, i * width, (i + 1) * width);
    end = row;
  }
  buffer.fill(0, 0, end * width);
}
