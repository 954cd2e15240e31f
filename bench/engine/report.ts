export interface Measured {
  engine: string;
  /** Tokens/s: one stream, greedy decode. */
  decode: number;
  /** Tokens/s over all streams decoding together. */
  together: number;
  /** Prompt tokens/s. */
  prefill: number;
  promptLength: number;
  steps: number;
  repeats: number;
}

const LLAMA = "llama.cpp";

/** The results table with each engine's ratio to llama.cpp (when it ran). */
export function markdownTable(results: Measured[], streams: number): string {
  const reference = results.find((result) => result.engine === LLAMA);
  const cell = (value: number, base: number | undefined) => `${value.toFixed(value < 10 ? 2 : 1)}${base ? ` (${(value / base).toFixed(2)}×)` : ""}`;
  const lines = [
    `| Engine | Decode, 1 stream (tok/s) | Decode, ${streams} streams (tok/s, total) | Prefill (tok/s) | Prompt / steps / runs |`,
    "|---|---:|---:|---:|---:|",
  ];
  for (const result of results) {
    const base = result.engine === LLAMA ? undefined : reference;
    lines.push(
      `| ${result.engine} | ${cell(result.decode, base?.decode)} | ${cell(result.together, base?.together)} | ${cell(result.prefill, base?.prefill)} | ${result.promptLength} / ${result.steps} / ${result.repeats} |`,
    );
  }
  if (reference) lines.push("", `Ratios in parentheses are to llama.cpp (above 1 is faster than llama.cpp).`);
  return lines.join("\n");
}

/** How closely the engines agree: greedy tokens and next-token logits on the same prompt. */
export function agreementLines(checks: { name: string; greedy: number[]; logits: number[] }[]): string[] {
  const [first, ...others] = checks;
  if (!first) return [];
  const lines = [`Greedy tokens of ${first.name}: ${first.greedy.join(" ")}`];
  for (const other of others) {
    const length = Math.min(first.greedy.length, other.greedy.length);
    let same = 0;
    while (same < length && first.greedy[same] === other.greedy[same]) same++;
    let worst = 0;
    let scale = 0;
    for (let i = 0; i < first.logits.length; i++) {
      worst = Math.max(worst, Math.abs(first.logits[i]! - other.logits[i]!));
      scale = Math.max(scale, Math.abs(first.logits[i]!));
    }
    lines.push(`${other.name}: first ${same} of ${length} greedy tokens identical; next-token logits of ${first.logits.length} tokens differ by at most ${worst.toExponential(2)} (largest |logit| ${scale.toFixed(2)})`);
  }
  return lines;
}
