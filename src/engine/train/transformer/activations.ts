import type { ActivationSizes } from "../../model/layer-activations.js";

/** The gradients flowing backward through one layer (shared by all layers of a pass). */
export class GradientBuffers {
  rows = 0;
  normed = new Float32Array(0);
  queries = new Float32Array(0);
  queriesRoped = new Float32Array(0);
  keys = new Float32Array(0);
  keysRoped = new Float32Array(0);
  values = new Float32Array(0);
  attended = new Float32Array(0);
  gate = new Float32Array(0);
  up = new Float32Array(0);
  activated = new Float32Array(0);
  projection = new Float32Array(0);

  constructor(private readonly sizes: ActivationSizes) {}

  ensure(rows: number, rank: number): void {
    if (rows * rank > this.projection.length) this.projection = new Float32Array(rows * rank);
    if (rows <= this.rows) return;
    const { hidden, queries, keyValues, intermediate } = this.sizes;
    this.normed = new Float32Array(rows * hidden);
    this.queries = new Float32Array(rows * queries);
    this.queriesRoped = new Float32Array(rows * queries);
    this.keys = new Float32Array(rows * keyValues);
    this.keysRoped = new Float32Array(rows * keyValues);
    this.values = new Float32Array(rows * keyValues);
    this.attended = new Float32Array(rows * queries);
    this.gate = new Float32Array(rows * intermediate);
    this.up = new Float32Array(rows * intermediate);
    this.activated = new Float32Array(rows * intermediate);
    this.rows = rows;
  }
}
