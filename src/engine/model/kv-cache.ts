/**
 * The keys and values one sequence has computed so far, per layer, laid out
 * [position × kvHeads × headDim]. Storage grows by doubling up to the model's maximum length;
 * `length` is how many positions are valid. A scheduler reuses prefixes with `fork` and rewinds
 * with `truncate`.
 */
export class KvCache {
  keys: Float32Array[];
  values: Float32Array[];
  length = 0;
  private capacity: number;

  constructor(
    readonly layers: number,
    /** kvHeads × headDim: the floats one position takes in one layer. */
    readonly rowSize: number,
    readonly maxLength: number,
    initialCapacity = 32,
  ) {
    this.capacity = Math.min(maxLength, Math.max(1, initialCapacity));
    this.keys = Array.from({ length: layers }, () => new Float32Array(this.capacity * rowSize));
    this.values = Array.from({ length: layers }, () => new Float32Array(this.capacity * rowSize));
  }

  /** Makes room for `positions` positions (keeping the valid ones). */
  reserve(positions: number): void {
    if (positions <= this.capacity) return;
    if (positions > this.maxLength) throw new RangeError(`a sequence of ${positions} positions exceeds the model's maximum length of ${this.maxLength}`);
    const capacity = this.capacityFor(positions);
    const grow = (old: Float32Array) => {
      const next = new Float32Array(capacity * this.rowSize);
      next.set(old.subarray(0, this.length * this.rowSize));
      return next;
    };
    this.keys = this.keys.map(grow);
    this.values = this.values.map(grow);
    this.capacity = capacity;
  }

  /** Forgets every position from `length` on. */
  truncate(length: number): void {
    if (!Number.isInteger(length) || length < 0 || length > this.length) throw new RangeError(`cannot truncate a cache of ${this.length} positions to ${length}`);
    this.length = length;
  }

  /** A new cache holding a copy of the first `length` positions. */
  fork(length = this.length): KvCache {
    if (length > this.length) throw new RangeError(`cannot fork ${length} positions from a cache of ${this.length}`);
    const copy = new KvCache(this.layers, this.rowSize, this.maxLength, length);
    for (let layer = 0; layer < this.layers; layer++) {
      copy.keys[layer]!.set(this.keys[layer]!.subarray(0, length * this.rowSize));
      copy.values[layer]!.set(this.values[layer]!.subarray(0, length * this.rowSize));
    }
    copy.length = length;
    return copy;
  }

  /** Bytes held (for cache budgeting). */
  get byteSize(): number {
    return 2 * this.layers * this.capacity * this.rowSize * 4;
  }

  /** Bytes the cache will hold once it has room for `positions` positions (a scheduler's projection). */
  byteSizeFor(positions: number): number {
    return 2 * this.layers * this.capacityFor(positions) * this.rowSize * 4;
  }

  private capacityFor(positions: number): number {
    if (positions <= this.capacity) return this.capacity;
    return Math.min(this.maxLength, Math.max(positions, this.capacity * 2));
  }
}
