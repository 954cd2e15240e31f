/** Widths of a model's activations, per token row. */
export interface ActivationSizes {
  hidden: number;
  queries: number;
  keyValues: number;
  intermediate: number;
}

/**
 * Activations layers can share because a backward recomputes them cheaply from what each layer
 * keeps: silu(gate)·up, a third of the MLP's activations, from gate and up.
 */
export class SharedActivations {
  activated = new Float32Array(0);

  ensure(rows: number, intermediate: number): void {
    if (this.activated.length < rows * intermediate) this.activated = new Float32Array(rows * intermediate);
  }
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
  /** x Aᵀ of each adapted linear layer, by index in LINEAR_NAMES ([rows × rank]). */
  projections: Float32Array[] = [];
  private projectionSize = 0;

  /** `shared`: where silu(gate)·up goes, maybe shared with other layers (then recompute it before reading it). */
  constructor(
    private readonly sizes: ActivationSizes,
    private readonly shared = new SharedActivations(),
  ) {}

  /** silu(gate)·up, in the shared buffer: another layer's forward may have overwritten it since. */
  get activated(): Float32Array {
    return this.shared.activated;
  }

  /** Floats one token row takes (for the activation memory budget), the shared ones left out. */
  static floatsPerRow(sizes: ActivationSizes, rank: number): number {
    return 3 * sizes.hidden + 3 * sizes.queries + 3 * sizes.keyValues + 2 * sizes.intermediate + 7 * rank;
  }

  ensure(rows: number, rank: number): void {
    if (rows * rank > this.projectionSize) {
      this.projectionSize = rows * rank;
      this.projections = Array.from({ length: 7 }, () => new Float32Array(rows * rank));
    }
    const { hidden, queries, keyValues, intermediate } = this.sizes;
    this.shared.ensure(rows, intermediate);
    if (rows <= this.rows) return;
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
    this.rows = rows;
  }
}
