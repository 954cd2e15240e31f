import { IGNORE, type SftRow } from "./sft-tokenize.js";
import type { TrainingSequence } from "./transformer/sequence.js";

/**
 * One sequence of an SFT batch: plain, or packed (several examples in one row, each attending to
 * itself and to a shared prefix, `attention.ts`), with the next tokens it trains in prediction
 * layout (position p predicts targets[p] where mask[p] = 1).
 */
export interface SftSequence {
  sequence: TrainingSequence;
  targets: Int32Array;
  mask: Uint8Array;
}

/**
 * Packs SFT rows that all begin with the same `prefixLength` tokens (a system prompt, a tool list)
 * into one training sequence: the prefix once, then each row's remainder at its original positions,
 * attending to the prefix and to itself only (`attention.ts`: the prefix is group 0, row i is group
 * i + 1 with parent 0). Every trained token keeps its own context, so the loss is the rows' summed
 * loss, while the prefix runs once. With prefixLength 0 the rows are simply concatenated, each
 * attending to itself. The first token after the prefix must not be trained (the prefix's last
 * position can predict only one next token).
 */
export function packSftRows(rows: readonly SftRow[], prefixLength: number): SftSequence {
  if (rows.length === 0) throw new RangeError("packSftRows needs at least one row");
  const first = rows[0]!;
  if (!Number.isInteger(prefixLength) || prefixLength < 0 || prefixLength > first.tokens.length) throw new RangeError(`prefix length ${prefixLength} does not fit the first row (${first.tokens.length} tokens)`);
  const length = prefixLength + rows.reduce((sum, row) => sum + row.tokens.length - prefixLength, 0);
  const tokens = new Int32Array(length);
  const inputPos = new Int32Array(length);
  const groupIds = new Int32Array(length);
  const parentIds = new Int32Array(length);
  const targets = new Int32Array(length);
  const mask = new Uint8Array(length);
  for (let p = 0; p < prefixLength; p++) [tokens[p], inputPos[p]] = [first.tokens[p]!, p];
  let at = prefixLength;
  rows.forEach((row, index) => {
    for (let p = 0; p < prefixLength; p++) {
      if (row.tokens[p] !== first.tokens[p]) throw new RangeError(`row ${index} does not start with the shared ${prefixLength}-token prefix`);
      if (row.labels[p] !== IGNORE) throw new RangeError(`row ${index} trains token ${p}, inside the shared prefix`);
    }
    if (prefixLength > 0 && prefixLength < row.tokens.length && row.labels[prefixLength] !== IGNORE) {
      throw new RangeError(`row ${index} trains the first token after the shared prefix, which a packed row cannot predict separately per row`);
    }
    for (let j = prefixLength; j < row.tokens.length; j++, at++) {
      tokens[at] = row.tokens[j]!;
      inputPos[at] = j;
      groupIds[at] = index + 1;
      if (j + 1 < row.tokens.length && row.labels[j + 1] !== IGNORE) [targets[at], mask[at]] = [row.tokens[j + 1]!, 1];
    }
  });
  return { sequence: { tokens, inputPos, groupIds, parentIds, length }, targets, mask };
}

/**
 * SFT rows as few sequences as fit `maxTokens` each (consecutive rows concatenated, each attending
 * to itself: `packSftRows` with no shared prefix); a longer row stays alone. One forward over many
 * rows runs every matrix product on more rows at once, which small models need to use the CPU well
 * (and a second thread at all); the loss and gradients are the rows' own, added up.
 */
export function packSftBatch(rows: readonly SftRow[], maxTokens: number): SftSequence[] {
  const sequences: SftSequence[] = [];
  let members: SftRow[] = [];
  let tokens = 0;
  for (const row of rows) {
    if (members.length > 0 && tokens + row.tokens.length > maxTokens) {
      sequences.push(packSftRows(members, 0));
      [members, tokens] = [[], 0];
    }
    members.push(row);
    tokens += row.tokens.length;
  }
  if (members.length > 0) sequences.push(packSftRows(members, 0));
  return sequences;
}
