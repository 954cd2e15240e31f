/**
 * Several async streams read as one, each value tagged with the index of its source, in the order
 * values arrive (one prompt's generation does not wait for another's). A failing source fails the
 * merge; the other sources are closed when the merge ends early.
 */
export async function* mergeTagged<T>(sources: readonly AsyncIterable<T>[]): AsyncGenerator<{ source: number; value: T }> {
  const iterators = sources.map((source) => source[Symbol.asyncIterator]());
  const pending = new Map<number, Promise<{ source: number; result: IteratorResult<T> }>>();
  const pull = (source: number) =>
    pending.set(
      source,
      iterators[source]!.next().then((result) => ({ source, result })),
    );
  iterators.forEach((_, source) => pull(source));
  try {
    while (pending.size > 0) {
      const { source, result } = await Promise.race(pending.values());
      if (result.done) {
        pending.delete(source);
        continue;
      }
      pull(source);
      yield { source, value: result.value };
    }
  } finally {
    for (const source of pending.keys()) void iterators[source]!.return?.(undefined);
  }
}
