import type { Kernels } from "../../kernels/types.js";
import type { ModelWeights } from "../../model/weights.js";
import type { ModelGradients } from "./model-gradients.js";

/** ℓ and H per position, prediction layout; NaN where not computed. */
export interface TokenScores {
  logprobs: Float64Array;
  entropies: Float64Array;
}

export interface TokenScorerOptions {
  kernels: Kernels;
  weights: ModelWeights;
  /** The final norm's epsilon. */
  eps: number;
  hidden: number;
  vocab: number;
  /** Positions whose logits are computed at once ([chunkRows × vocab] f32). */
  chunkRows: number;
  /**
   * Up to this many bytes of logits (with their rows' normed hidden states) stay from `score` to
   * `backward`; a pass with more computes them again in the backward, a chunk at a time.
   */
  holdBytes: number;
}

/**
 * The language-model head of the trainer: final norm, lm_head and log-softmax, only at the
 * positions that are asked for, a chunk of rows at a time, so no [positions × vocab] matrix is
 * ever held. ℓ_p = logits_p[target_p] − logsumexp(logits_p) (`Kernels.tokenLogprobs`, summed exactly
 * as the sampler sums its normalizer, so trained and sampled logprobs agree). The backward reuses
 * the logits when all of them fit `holdBytes` (a Qwen-sized vocabulary's 256 scored rows are 155
 * MB), and otherwise recomputes each chunk's (a second lm_head pass over the trained rows only).
 */
export class TokenScorer {
  private readonly kernels: Kernels;
  private readonly weights: ModelWeights;
  private readonly eps: number;
  private readonly hidden: number;
  private readonly vocab: number;
  private readonly chunkRows: number;
  private readonly holdBytes: number;
  private gathered = new Float32Array(0);
  private normed = new Float32Array(0);
  private logits = new Float32Array(0);
  private dNormed = new Float32Array(0);
  private dGathered = new Float32Array(0);
  /** The positions scored by the last `score`, and log Σ exp(logits) at each. */
  private positions = new Int32Array(0);
  private normalizers = new Float64Array(0);
  private targets = new Int32Array(0);
  private count = 0;
  /** Whether the last `score` kept every chunk's logits (and gathered and normed rows), at the scored row's place. */
  private held = false;
  /** Per chunk row: the kernel's logprobs and entropies, and the backward's dℓ. */
  private chunkLogprobs = new Float64Array(0);
  private chunkEntropies = new Float64Array(0);
  private chunkGradients = new Float64Array(0);

  constructor(options: TokenScorerOptions) {
    ({ kernels: this.kernels, weights: this.weights, eps: this.eps, hidden: this.hidden, vocab: this.vocab, chunkRows: this.chunkRows, holdBytes: this.holdBytes } = options);
  }

  /**
   * ℓ and entropy at every p < rows with mask[p] = 1, from the final hidden states [rows × hidden].
   * `out` arrays must be as long as `mask`; other positions become NaN.
   */
  score(finalHidden: Float32Array, rows: number, targets: Int32Array, mask: Uint8Array, out: TokenScores): void {
    out.logprobs.fill(NaN);
    out.entropies.fill(NaN);
    this.select(rows, targets, mask);
    const vocab = this.vocab;
    const hold = this.count > 0 && this.count * (vocab + 2 * this.hidden) * 4 <= this.holdBytes;
    this.reserve(hold ? this.count : Math.min(this.chunkRows, this.count));
    for (let first = 0; first < this.count; first += this.chunkRows) {
      const count = Math.min(this.chunkRows, this.count - first);
      const logits = this.chunkLogits(finalHidden, first, count, hold ? first : 0);
      this.kernels.tokenLogprobs({
        logits,
        rows: count,
        vocab,
        targets: this.targets.subarray(first, first + count),
        normalizers: this.normalizers.subarray(first, first + count),
        logprobs: this.chunkLogprobs,
        entropies: this.chunkEntropies,
      });
      for (let c = 0; c < count; c++) {
        const position = this.positions[first + c]!;
        out.logprobs[position] = this.chunkLogprobs[c]!;
        out.entropies[position] = this.chunkEntropies[c]!;
      }
    }
    this.held = hold;
  }

  /**
   * Adds dLoss/dh for the final hidden states of the scored positions into dHidden, from dLoss/dℓ
   * (prediction layout): dlogits = g·(onehot(target) − softmax), back through lm_head and the norm.
   * With `weightGradients` (full-parameter training), lm_head's and the final norm's gradients too.
   */
  backward(finalHidden: Float32Array, dLogprobs: Float64Array, dHidden: Float32Array, weightGradients?: ModelGradients): void {
    const { hidden, vocab } = this;
    // Logits held from `score` are read where they are; otherwise they are recomputed, a chunk at
    // a time, for the scored positions that carry a gradient only.
    const held = this.held;
    this.held = false;
    let kept = 0;
    for (let i = 0; i < this.count; i++) {
      if (!held && dLogprobs[this.positions[i]!] === 0) continue;
      this.positions[kept] = this.positions[i]!;
      this.normalizers[kept] = this.normalizers[i]!;
      this.targets[kept] = this.targets[i]!;
      kept++;
    }
    this.count = kept;
    for (let first = 0; first < kept; first += this.chunkRows) {
      const count = Math.min(this.chunkRows, kept - first);
      const at = held ? first : 0;
      const logits = held ? this.logits.subarray(first * vocab, (first + count) * vocab) : this.chunkLogits(finalHidden, first, count, 0);
      for (let c = 0; c < count; c++) this.chunkGradients[c] = dLogprobs[this.positions[first + c]!]!;
      this.kernels.tokenLogprobsBackward({
        logits,
        rows: count,
        vocab,
        targets: this.targets.subarray(first, first + count),
        normalizers: this.normalizers.subarray(first, first + count),
        gradients: this.chunkGradients,
      });
      const { lmHead, finalNorm } = this.weights;
      this.kernels.linearBackward({ dx: this.dNormed, dy: logits, rows: count, w: lmHead });
      const rowsAt = (buffer: Float32Array) => buffer.subarray(at * hidden, (at + count) * hidden);
      if (weightGradients) this.kernels.linearWeightBackward({ dWeight: weightGradients.matrix(lmHead), dy: logits, x: rowsAt(this.normed), rows: count, outDim: vocab, inDim: hidden });
      this.kernels.rmsNormBackward({ dx: this.dGathered, dy: this.dNormed, x: rowsAt(this.gathered), weight: finalNorm, rows: count, eps: this.eps, dWeight: weightGradients?.of(finalNorm) });
      for (let c = 0; c < count; c++) {
        const to = this.positions[first + c]! * hidden;
        const from = c * hidden;
        for (let i = 0; i < hidden; i++) dHidden[to + i] += this.dGathered[from + i]!;
      }
    }
  }

  private select(rows: number, targets: Int32Array, mask: Uint8Array): void {
    if (this.positions.length < rows) {
      this.positions = new Int32Array(rows);
      this.normalizers = new Float64Array(rows);
      this.targets = new Int32Array(rows);
    }
    let count = 0;
    for (let p = 0; p < rows; p++) {
      if (!mask[p]) continue;
      const target = targets[p]!;
      if (!Number.isInteger(target) || target < 0 || target >= this.vocab) throw new RangeError(`target token ${target} at position ${p} is outside the model's vocabulary (${this.vocab})`);
      this.positions[count] = p;
      this.targets[count] = target;
      count++;
    }
    this.count = count;
  }

  /** Makes the logits, gathered and normed buffers hold `rows` rows (they only grow), the per-chunk ones a chunk. */
  private reserve(rows: number): void {
    const { hidden, vocab } = this;
    if (this.logits.length < rows * vocab) {
      this.logits = new Float32Array(rows * vocab);
      this.gathered = new Float32Array(rows * hidden);
      this.normed = new Float32Array(rows * hidden);
    }
    const chunk = Math.min(this.chunkRows, rows);
    if (this.dNormed.length < chunk * hidden) {
      this.dNormed = new Float32Array(chunk * hidden);
      this.dGathered = new Float32Array(chunk * hidden);
      this.chunkLogprobs = new Float64Array(chunk);
      this.chunkEntropies = new Float64Array(chunk);
      this.chunkGradients = new Float64Array(chunk);
    }
  }

  /** Gathers `count` selected rows from `first` on to buffer row `at`, normalizes them and returns their logits. */
  private chunkLogits(finalHidden: Float32Array, first: number, count: number, at: number): Float32Array {
    const { hidden, vocab } = this;
    const gathered = this.gathered.subarray(at * hidden, (at + count) * hidden);
    const normed = this.normed.subarray(at * hidden, (at + count) * hidden);
    for (let c = 0; c < count; c++) {
      const position = this.positions[first + c]!;
      gathered.set(finalHidden.subarray(position * hidden, (position + 1) * hidden), c * hidden);
    }
    this.kernels.rmsNorm(normed, gathered, this.weights.finalNorm, count, this.eps);
    const logits = this.logits.subarray(at * vocab, (at + count) * vocab);
    this.kernels.matmul(logits, normed, count, this.weights.lmHead);
    return logits;
  }
}
