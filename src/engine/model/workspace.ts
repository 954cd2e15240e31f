/** Scratch activations of a forward pass, sized for a number of token rows and reused across calls. */
export class Workspace {
  rows = 0;
  hidden = new Float32Array(0);
  normed = new Float32Array(0);
  projected = new Float32Array(0);
  queries = new Float32Array(0);
  keys = new Float32Array(0);
  values = new Float32Array(0);
  attended = new Float32Array(0);
  gate = new Float32Array(0);
  up = new Float32Array(0);
  positions = new Int32Array(0);

  constructor(private readonly sizes: { hidden: number; queries: number; keyValues: number; intermediate: number }) {}

  /** Makes every buffer hold at least `rows` rows; contents are not kept. */
  ensure(rows: number): void {
    if (rows <= this.rows) return;
    const { hidden, queries, keyValues, intermediate } = this.sizes;
    this.hidden = new Float32Array(rows * hidden);
    this.normed = new Float32Array(rows * hidden);
    this.projected = new Float32Array(rows * hidden);
    this.queries = new Float32Array(rows * queries);
    this.keys = new Float32Array(rows * keyValues);
    this.values = new Float32Array(rows * keyValues);
    this.attended = new Float32Array(rows * queries);
    this.gate = new Float32Array(rows * intermediate);
    this.up = new Float32Array(rows * intermediate);
    this.positions = new Int32Array(rows);
    this.rows = rows;
  }
}
