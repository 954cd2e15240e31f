/** The residual stream of a forward pass and what its LM head reads, sized for a number of token rows and reused across calls. */
export class Workspace {
  rows = 0;
  hidden = new Float32Array(0);
  normed = new Float32Array(0);
  positions = new Int32Array(0);

  constructor(private readonly sizes: { hidden: number }) {}

  /** Makes every buffer hold at least `rows` rows; contents are not kept. */
  ensure(rows: number): void {
    if (rows <= this.rows) return;
    this.hidden = new Float32Array(rows * this.sizes.hidden);
    this.normed = new Float32Array(rows * this.sizes.hidden);
    this.positions = new Int32Array(rows);
    this.rows = rows;
  }
}
