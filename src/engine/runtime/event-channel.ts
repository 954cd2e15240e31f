/**
 * A one-consumer async queue: the producer pushes items, then ends or fails it; the consumer
 * iterates. A consumer that stops early (`break`, `return()`) triggers `onAbandon` once, and later
 * pushes are dropped.
 */
export class EventChannel<T> implements AsyncIterable<T> {
  private readonly buffer: T[] = [];
  private ended = false;
  private failure: { error: unknown } | null = null;
  private abandoned = false;
  private wake: (() => void) | null = null;

  constructor(private readonly onAbandon: () => void = () => undefined) {}

  push(...items: T[]): void {
    if (this.ended || this.abandoned) return;
    this.buffer.push(...items);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.failure = { error };
    this.ended = true;
    this.notify();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: async () => {
        for (;;) {
          if (this.buffer.length > 0) return { done: false, value: this.buffer.shift()! };
          if (this.failure) {
            const { error } = this.failure;
            this.failure = null;
            throw error;
          }
          if (this.ended || this.abandoned) return { done: true, value: undefined };
          await new Promise<void>((resolve) => (this.wake = resolve));
        }
      },
      return: async () => {
        if (!this.ended && !this.abandoned) {
          this.abandoned = true;
          this.buffer.length = 0;
          this.onAbandon();
        }
        return { done: true, value: undefined };
      },
    };
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
