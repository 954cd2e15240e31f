/**
 * Partial selection over vocabulary-sized arrays: the sampler never sorts a whole vocabulary.
 * Ties between equal values always resolve to the lower token id, so results are deterministic.
 */

/** Index of the first maximum among the first `length` values; -1 when none is above -Infinity. */
export function argmax(values: Float32Array, length = values.length): number {
  let best = -1;
  let max = -Infinity;
  for (let i = 0; i < length; i++) {
    const v = values[i]!;
    if (v > max) {
      max = v;
      best = i;
    }
  }
  return best;
}

/**
 * The ids of the `k` largest values, best first (ties: lower id first). One pass with a size-k
 * min-heap: O(V log k), and nearly every element costs a single comparison with the heap's root.
 */
export function topKIndices(values: Float32Array, k: number, length = values.length): number[] {
  const size = Math.min(k, length);
  if (size <= 0) return [];
  const heap = new Int32Array(size); // ids; heap[0] is the worst kept element
  for (let id = 0; id < size; id++) {
    heap[id] = id;
    siftUp(heap, id, values);
  }
  let worstKept = values[heap[0]!]!;
  for (let id = size; id < length; id++) {
    // On a tie the kept (lower) id wins, so only a strictly larger value enters.
    if (values[id]! > worstKept) {
      heap[0] = id;
      siftDown(heap, 0, size, values);
      worstKept = values[heap[0]!]!;
    }
  }
  const ids = Array.from(heap);
  ids.sort((a, b) => values[b]! - values[a]! || a - b);
  return ids;
}

/** Whether heap element `a` ranks below `b` (smaller value, or equal value and higher id). */
function worse(a: number, b: number, values: Float32Array): boolean {
  const va = values[a]!;
  const vb = values[b]!;
  return va < vb || (va === vb && a > b) || (Number.isNaN(va) && !Number.isNaN(vb));
}

function siftUp(heap: Int32Array, index: number, values: Float32Array): void {
  let child = index;
  while (child > 0) {
    const parent = (child - 1) >> 1;
    if (!worse(heap[child]!, heap[parent]!, values)) break;
    swap(heap, child, parent);
    child = parent;
  }
}

function siftDown(heap: Int32Array, index: number, size: number, values: Float32Array): void {
  let parent = index;
  for (;;) {
    const left = 2 * parent + 1;
    if (left >= size) return;
    const right = left + 1;
    const child = right < size && worse(heap[right]!, heap[left]!, values) ? right : left;
    if (!worse(heap[child]!, heap[parent]!, values)) return;
    swap(heap, child, parent);
    parent = child;
  }
}

function swap(array: Int32Array, i: number, j: number): void {
  const t = array[i]!;
  array[i] = array[j]!;
  array[j] = t;
}

/**
 * The k-th largest (1-based) of the first `length` values. Small k: one pass with a size-k
 * min-heap of values; large k: quickselect on `scratch` (a copy). `values` is left alone.
 */
export function kthLargest(values: Float32Array, k: number, scratch: Float32Array, length = values.length): number {
  if (k < 1 || k > length) throw new RangeError(`k=${k} is outside 1..${length}`);
  return k <= HEAP_SELECT_LIMIT ? kthLargestByHeap(values, k, scratch, length) : kthLargestByQuickselect(values, k, scratch, length);
}

const HEAP_SELECT_LIMIT = 1024;

function kthLargestByHeap(values: Float32Array, k: number, scratch: Float32Array, length: number): number {
  const heap = scratch.subarray(0, k); // min-heap of the k largest values so far
  for (let i = 0; i < k; i++) {
    let child = i;
    heap[child] = values[i]!;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!(heap[child]! < heap[parent]!)) break;
      const t = heap[child]!;
      heap[child] = heap[parent]!;
      heap[parent] = t;
      child = parent;
    }
  }
  let smallest = heap[0]!;
  for (let i = k; i < length; i++) {
    const v = values[i]!;
    if (!(v > smallest)) continue;
    // Replace the root and sift it down.
    let parent = 0;
    for (;;) {
      const left = 2 * parent + 1;
      if (left >= k) break;
      const right = left + 1;
      const child = right < k && heap[right]! < heap[left]! ? right : left;
      if (!(heap[child]! < v)) break;
      heap[parent] = heap[child]!;
      parent = child;
    }
    heap[parent] = v;
    smallest = heap[0]!;
  }
  return smallest;
}

function kthLargestByQuickselect(values: Float32Array, k: number, scratch: Float32Array, length: number): number {
  const a = scratch.subarray(0, length);
  a.set(values.subarray(0, length));
  // Select the element that would sit at index `target` in ascending order.
  const target = length - k;
  let lo = 0;
  let hi = length - 1;
  while (hi > lo) {
    const pivot = medianOfThree(a[lo]!, a[(lo + hi) >> 1]!, a[hi]!);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return a[target]!;
  }
  return a[target]!;
}

function medianOfThree(a: number, b: number, c: number): number {
  if (a < b) return b < c ? b : a < c ? c : a;
  return a < c ? a : b < c ? c : b;
}

/**
 * Nucleus (top-p) selection over `count` candidates with non-negative weights: reorders `ids` and
 * `weights` in place so the kept candidates come first and returns how many are kept. A candidate
 * is kept when the weight of the candidates strictly ahead of it (heavier ones) is below
 * `targetMass` — the smallest heaviest-first prefix reaching the target, as vLLM's cumulative-sum
 * rule. Candidates tied in weight at the boundary are all kept. Expected O(count).
 */
export function selectNucleus(ids: Int32Array, weights: Float64Array, count: number, targetMass: number): number {
  let lo = 0;
  let hi = count;
  let need = targetMass;
  while (hi - lo > 0) {
    if (need <= 0) return lo;
    const pivot = weights[lo + ((hi - lo) >> 1)]!;
    // Three-way partition of [lo, hi): heavier | equal | lighter.
    let heavyEnd = lo;
    let lightStart = hi;
    let i = lo;
    let heavyMass = 0;
    let equalMass = 0;
    while (i < lightStart) {
      const w = weights[i]!;
      if (w > pivot) {
        heavyMass += w;
        swapPair(ids, weights, i++, heavyEnd++);
      } else if (w < pivot) {
        swapPair(ids, weights, i, --lightStart);
      } else {
        equalMass += w;
        i++;
      }
    }
    if (heavyMass >= need) {
      hi = heavyEnd; // the pivot and everything lighter are behind enough mass: dropped
    } else if (heavyMass + equalMass >= need) {
      return lightStart; // the boundary falls inside the tie group: keep the whole group
    } else {
      need -= heavyMass + equalMass;
      lo = lightStart;
    }
  }
  return lo;
}

function swapPair(ids: Int32Array, weights: Float64Array, i: number, j: number): void {
  const id = ids[i]!;
  ids[i] = ids[j]!;
  ids[j] = id;
  const w = weights[i]!;
  weights[i] = weights[j]!;
  weights[j] = w;
}
