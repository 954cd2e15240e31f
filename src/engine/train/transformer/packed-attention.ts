import type { AttentionBackwardArgs, AttentionShape, Kernels } from "../../kernels/types.js";
import type { AttentionSpan } from "./sequence.js";

/** The whole packed row's tensors, laid out as `Kernels.attentionBackward` takes one span's; dKeys/dValues are added to. */
export type PackedAttentionBackwardArgs = Omit<AttentionBackwardArgs, "rows" | "start" | "shape"> & { spans: readonly AttentionSpan[] };

/**
 * Attention over a packed row, span by span (`attentionSpans`): a span without context runs the
 * forward kernel on its own rows in place; otherwise its context keys/values and its own are
 * gathered into one contiguous run, which is exactly the layout of a KV cache holding the shared
 * prompt and then the completion, so the arithmetic is the inference forward's.
 */
export class PackedAttention {
  private keys = new Float32Array(0);
  private values = new Float32Array(0);
  private dKeys = new Float32Array(0);
  private dValues = new Float32Array(0);

  constructor(
    private readonly kernels: Kernels,
    private readonly shape: AttentionShape,
  ) {}

  forward(out: Float32Array, q: Float32Array, keys: Float32Array, values: Float32Array, spans: readonly AttentionSpan[]): void {
    const qWidth = this.shape.heads * this.shape.headDim;
    const kvWidth = this.shape.kvHeads * this.shape.headDim;
    for (const span of spans) {
      const rows = span.end - span.start;
      const queries = q.subarray(span.start * qWidth, span.end * qWidth);
      const output = out.subarray(span.start * qWidth, span.end * qWidth);
      if (span.contextLength === 0) {
        const [from, to] = [span.start * kvWidth, span.end * kvWidth];
        this.kernels.attention({ out: output, q: queries, rows, keys: keys.subarray(from, to), values: values.subarray(from, to), start: 0, shape: this.shape });
        continue;
      }
      const [k, v] = this.gather(span, keys, values, kvWidth);
      this.kernels.attention({ out: output, q: queries, rows, keys: k, values: v, start: span.contextLength, shape: this.shape });
    }
  }

  /** Writes dq and adds into dKeys/dValues. */
  backward(args: PackedAttentionBackwardArgs): void {
    const { dq, dKeys, dValues, dOut, q, keys, values, spans } = args;
    const qWidth = this.shape.heads * this.shape.headDim;
    const kvWidth = this.shape.kvHeads * this.shape.headDim;
    for (const span of spans) {
      const rows = span.end - span.start;
      const [qFrom, qTo] = [span.start * qWidth, span.end * qWidth];
      if (span.contextLength === 0) {
        const [from, to] = [span.start * kvWidth, span.end * kvWidth];
        this.kernels.attentionBackward({
          dq: dq.subarray(qFrom, qTo),
          dKeys: dKeys.subarray(from, to),
          dValues: dValues.subarray(from, to),
          dOut: dOut.subarray(qFrom, qTo),
          q: q.subarray(qFrom, qTo),
          keys: keys.subarray(from, to),
          values: values.subarray(from, to),
          rows,
          start: 0,
          shape: this.shape,
        });
        continue;
      }
      const [k, v] = this.gather(span, keys, values, kvWidth);
      const size = (span.contextLength + rows) * kvWidth;
      if (this.dKeys.length < size) {
        this.dKeys = new Float32Array(size);
        this.dValues = new Float32Array(size);
      }
      this.dKeys.fill(0, 0, size);
      this.dValues.fill(0, 0, size);
      this.kernels.attentionBackward({
        dq: dq.subarray(qFrom, qTo),
        dKeys: this.dKeys,
        dValues: this.dValues,
        dOut: dOut.subarray(qFrom, qTo),
        q: q.subarray(qFrom, qTo),
        keys: k,
        values: v,
        rows,
        start: span.contextLength,
        shape: this.shape,
      });
      // Scatter back: context positions collect the gradients of every span that reads them.
      let at = 0;
      for (const range of [...span.context, span]) {
        for (let position = range.start; position < range.end; position++, at++) {
          const row = position * kvWidth;
          const gathered = at * kvWidth;
          for (let i = 0; i < kvWidth; i++) {
            dKeys[row + i] += this.dKeys[gathered + i]!;
            dValues[row + i] += this.dValues[gathered + i]!;
          }
        }
      }
    }
  }

  /** The span's context rows, then its own, as contiguous [position × kvWidth] runs. */
  private gather(span: AttentionSpan, keys: Float32Array, values: Float32Array, kvWidth: number): [Float32Array, Float32Array] {
    const size = (span.contextLength + span.end - span.start) * kvWidth;
    if (this.keys.length < size) {
      this.keys = new Float32Array(size);
      this.values = new Float32Array(size);
    }
    let at = 0;
    for (const range of [...span.context, span]) {
      this.keys.set(keys.subarray(range.start * kvWidth, range.end * kvWidth), at);
      this.values.set(values.subarray(range.start * kvWidth, range.end * kvWidth), at);
      at += (range.end - range.start) * kvWidth;
    }
    return [this.keys.subarray(0, size), this.values.subarray(0, size)];
  }
}
