/** What orders waiting requests: priority (lower first) when the engine uses it, then arrival. */
export interface QueueKey {
  readonly priority: number;
  /** Increasing with arrival; ties between equal priorities go to the earlier one. */
  readonly arrival: number;
}

/** Negative when `a` goes first. */
export function compareKeys(a: QueueKey, b: QueueKey, byPriority: boolean): number {
  if (byPriority && a.priority !== b.priority) return a.priority - b.priority;
  return a.arrival - b.arrival;
}

/**
 * The requests waiting to run, in admission order: arrival order (FCFS), or with priority
 * scheduling lower priority values first and arrival order among equals. A preempted request comes
 * back with its original key, so it goes ahead of everything that arrived after it.
 */
export class WaitQueue<T extends QueueKey> {
  private readonly items: T[] = [];

  constructor(private readonly byPriority: boolean) {}

  get length(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  shift(): T | undefined {
    return this.items.shift();
  }

  insert(item: T): void {
    // Binary search for the first item that goes after `item`.
    let low = 0;
    let high = this.items.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareKeys(this.items[mid]!, item, this.byPriority) <= 0) low = mid + 1;
      else high = mid;
    }
    this.items.splice(low, 0, item);
  }

  remove(item: T): boolean {
    const index = this.items.indexOf(item);
    if (index < 0) return false;
    this.items.splice(index, 1);
    return true;
  }

  [Symbol.iterator](): Iterator<T> {
    return this.items[Symbol.iterator]();
  }
}
