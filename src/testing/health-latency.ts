/**
 * Times every GET /health answered while `work` runs (and for at least `minMs`, so the p99 rests on
 * a few hundred samples), polling every 5 ms; returns them sorted.
 */
export async function healthLatenciesDuring(baseUrl: string, work: Promise<unknown>, minMs = 4000): Promise<number[]> {
  const latencies: number[] = [];
  let done = false;
  const finished = work.finally(() => {
    done = true;
  });
  const until = performance.now() + minMs;
  while (!done || performance.now() < until) {
    const started = performance.now();
    const res = await fetch(`${baseUrl}/health`);
    await res.text();
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await finished;
  return latencies.sort((a, b) => a - b);
}

/** The 99th percentile of sorted samples. */
export const p99 = (sorted: number[]) => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
