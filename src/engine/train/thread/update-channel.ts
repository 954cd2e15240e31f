/**
 * A one-consumer async queue: the producer pushes values and ends it (or fails it), the consumer
 * iterates with `for await`. Values pushed before the consumer asks are kept in order.
 */
export class UpdateChannel<T> implements AsyncIterable<T> {
  private readonly values: T[] = [];
  private ended = false;
  private error: { reason: unknown } | undefined;
  private waiter: (() => void) | undefined;

  push(value: T): void {
    if (this.closed) return;
    this.values.push(value);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  /** Ends the channel with an error; values already pushed are still delivered first. */
  fail(reason: unknown): void {
    if (this.closed) return;
    this.error = { reason };
    this.wake();
  }

  get closed(): boolean {
    return this.ended || this.error !== undefined;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const value = this.values.shift();
      if (value !== undefined) {
        yield value;
        continue;
      }
      if (this.error) throw this.error.reason;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}
