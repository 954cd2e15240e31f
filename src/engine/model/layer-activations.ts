/** Widths of a model's activations, per token row. */
export interface ActivationSizes {
  hidden: number;
  queries: number;
  keyValues: number;
  intermediate: number;
}

/**
 * What one decoder layer's forward computes (and the trainer's backward reads), for `rows` token
 * rows. The layer's input is kept outside (the trainer keeps every layer's input). Buffers grow
 * and are reused; contents are not kept across a resize.
 */
export class LayerActivations {
  rows = 0;
  normedAttention = new Float32Array(0);
  /** q_proj/k_proj outputs (with the adapter), before the q/k norm and RoPE. */
  queries = new Float32Array(0);
  keys = new Float32Array(0);
  /** After the q/k norm and RoPE: what attention reads. */
  queriesRoped = new Float32Array(0);
  keysRoped = new Float32Array(0);
  values = new Float32Array(0);
  attended = new Float32Array(0);
  hiddenMid = new Float32Array(0);
  normedMlp = new Float32Array(0);
  gate = new Float32Array(0);
  up = new Float32Array(0);
  activated = new Float32Array(0);
  /** x Aᵀ of each adapted linear layer, by index in LINEAR_NAMES ([rows × rank]). */
  projections: Float32Array[] = [];
  private projectionSize = 0;

  constructor(private readonly sizes: ActivationSizes) {}

  /** Floats one token row takes (for the activation memory budget). */
  static floatsPerRow(sizes: ActivationSizes, rank: number): number {
    return 3 * sizes.hidden + 3 * sizes.queries + 3 * sizes.keyValues + 3 * sizes.intermediate + 7 * rank;
  }

  ensure(rows: number, rank: number): void {
    if (rows * rank > this.projectionSize) {
      this.projectionSize = rows * rank;
      this.projections = Array.from({ length: 7 }, () => new Float32Array(rows * rank));
    }
    if (rows <= this.rows) return;
    const { hidden, queries, keyValues, intermediate } = this.sizes;
    this.normedAttention = new Float32Array(rows * hidden);
    this.queries = new Float32Array(rows * queries);
    this.keys = new Float32Array(rows * keyValues);
    this.queriesRoped = new Float32Array(rows * queries);
    this.keysRoped = new Float32Array(rows * keyValues);
    this.values = new Float32Array(rows * keyValues);
    this.attended = new Float32Array(rows * queries);
    this.hiddenMid = new Float32Array(rows * hidden);
    this.normedMlp = new Float32Array(rows * hidden);
    this.gate = new Float32Array(rows * intermediate);
    this.up = new Float32Array(rows * intermediate);
    this.activated = new Float32Array(rows * intermediate);
    this.rows = rows;
  }
}
