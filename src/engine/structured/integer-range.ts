/**
 * EBNF for the JSON integers between two bounds (inclusive; either may be open), spelled as JSON
 * writes them: no leading zeros, no "-0". xgrammar's own converter gets integer bounds wrong
 * (`minimum: 0, maximum: 150` admits 159; `minimum: 7` admits 1), so bounded integers are built here.
 */
export function integerRangeEbnf(min: bigint | undefined, max: bigint | undefined): string {
  if (min !== undefined && max !== undefined && min > max) throw new RangeError(`minimum ${min} is above maximum ${max}`);
  const options: string[] = [];
  // Negative numbers: "-" then the magnitudes between -max and -min.
  if (min === undefined || min < 0n) {
    const lowMagnitude = max !== undefined && max < 0n ? -max : 1n;
    options.push(...magnitudes(lowMagnitude, min === undefined ? undefined : -min).map((option) => `"-" ${option}`));
  }
  if (max === undefined || max >= 0n) options.push(...magnitudes(min !== undefined && min > 0n ? min : 0n, max));
  return options.length === 1 ? options[0]! : `(${options.join(" | ")})`;
}

/** Alternatives spelling the numbers in [low, high] (high undefined: unbounded), low ≥ 0. */
function magnitudes(low: bigint, high: bigint | undefined): string[] {
  const options: string[] = [];
  const lowDigits = low.toString().length;
  const topDigits = high === undefined ? lowDigits : high.toString().length;
  for (let digits = lowDigits; digits <= topDigits; digits++) {
    const first = digits === 1 ? 0n : 10n ** BigInt(digits - 1);
    const last = 10n ** BigInt(digits) - 1n;
    const from = low > first ? low : first;
    const to = high !== undefined && high < last ? high : last;
    if (from <= to) options.push(...sameLength(from.toString(), to.toString()));
  }
  // Unbounded above: every number with more digits than the bound.
  if (high === undefined) options.push(`[1-9] [0-9]{${lowDigits},}`);
  return options;
}

/** Alternatives for the numbers between two digit strings of the same length. */
function sameLength(low: string, high: string): string[] {
  if (low.length === 1) return [low === high ? `"${low}"` : `[${low}-${high}]`];
  const rest = low.length - 1;
  const tail = (count: number) => (count === 1 ? "[0-9]" : `[0-9]{${count}}`);
  if (/^0*$/.test(low.slice(1)) && /^9*$/.test(high.slice(1))) {
    return [`${low[0] === high[0] ? `"${low[0]}"` : `[${low[0]}-${high[0]}]`} ${tail(rest)}`];
  }
  if (low[0] === high[0]) return sameLength(low.slice(1), high.slice(1)).map((option) => `"${low[0]}" ${option}`);
  const options = sameLength(low.slice(1), "9".repeat(rest)).map((option) => `"${low[0]}" ${option}`);
  const firstLow = Number(low[0]) + 1;
  const firstHigh = Number(high[0]) - 1;
  if (firstLow <= firstHigh) options.push(`${firstLow === firstHigh ? `"${firstLow}"` : `[${firstLow}-${firstHigh}]`} ${tail(rest)}`);
  options.push(...sameLength("0".repeat(rest), high.slice(1)).map((option) => `"${high[0]}" ${option}`));
  return options;
}
