export interface Measured {
  engine: string;
  /** The thread count of the group of engines it ran beside. */
  group: number;
  /** The best run (least disturbed by other load) of each measurement, tokens/s. */
  best: Rates;
  /** The median run, tokens/s. */
  median: Rates;
  promptLength: number;
  steps: number;
  repeats: number;
}

export interface Rates {
  /** Tokens/s: one stream, greedy decode. */
  decode: number;
  /** Tokens/s over all streams decoding together. */
  together: number;
  /** Prompt tokens/s. */
  prefill: number;
}

const LLAMA = "llama.cpp";

/** The results table (best or median runs) with each engine's ratio to llama.cpp (when it ran). */
export function markdownTable(all: Measured[], streams: number, pick: "best" | "median"): string {
  const results = all.map((result) => ({ ...result[pick], engine: result.engine, promptLength: result.promptLength, steps: result.steps, repeats: result.repeats }));
  const reference = results.find((result) => result.engine.startsWith(LLAMA));
  const cell = (value: number, base: number | undefined) => `${value.toFixed(value < 10 ? 2 : 1)}${base ? ` (${(value / base).toFixed(2)}×)` : ""}`;
  const lines = [`| Engine | Decode, 1 stream (tok/s) | Decode, ${streams} streams (tok/s, total) | Prefill (tok/s) | Prompt / steps / runs |`, "|---|---:|---:|---:|---:|"];
  for (const result of results) {
    const base = result === reference ? undefined : reference;
    lines.push(`| ${result.engine} | ${cell(result.decode, base?.decode)} | ${cell(result.together, base?.together)} | ${cell(result.prefill, base?.prefill)} | ${result.promptLength} / ${result.steps} / ${result.repeats} |`);
  }
  if (reference) lines.push("", `Ratios in parentheses are to llama.cpp (above 1 is faster than llama.cpp).`);
  return lines.join("\n");
}

export interface Agreement {
  name: string;
  greedy: number[];
  top: [number, number][];
}

/** How closely the engines agree: greedy tokens, and the top next-token candidates with their logits. */
export function agreementLines(checks: Agreement[]): string[] {
  const [first, ...others] = checks;
  if (!first) return [];
  const lines = [`${first.name}: greedy ${first.greedy.join(" ")}; top ${first.top.length} next tokens ${first.top.map(([token, logit]) => `${token} (${logit.toFixed(3)})`).join(", ")}`];
  for (const other of others) {
    const length = Math.min(first.greedy.length, other.greedy.length);
    let same = 0;
    while (same < length && first.greedy[same] === other.greedy[same]) same++;
    const theirs = new Map(other.top);
    const shared = first.top.filter(([token]) => theirs.has(token));
    const worst = Math.max(0, ...shared.map(([token, logit]) => Math.abs(logit - theirs.get(token)!)));
    const sameOrder = first.top.every(([token], i) => other.top[i]?.[0] === token);
    lines.push(
      `${other.name}: first ${same} of ${length} greedy tokens identical; ${shared.length} of the top ${first.top.length} next tokens shared${sameOrder ? " in the same order" : ""}, their logits within ${worst.toExponential(2)}`,
    );
  }
  return lines;
}
