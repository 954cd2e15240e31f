import type { ChatTemplateDeps } from "../train/chat-render.js";
import { packSftRows } from "../train/sft-packing.js";
import { type SftRow, tokenizeSftExample } from "../train/sft-tokenize.js";
import type { SftSequence } from "../train/sft-packing.js";
import type { TinyChatExample } from "./examples.js";

/** A tokenized example and the system turn it starts with (shared by many rows, so run once per packed row). */
export interface TrainingRow extends SftRow {
  /** Tokens of the leading system turn (with the tool list), 0 without one. */
  prefixLength: number;
}

/**
 * Tokenizes examples for SFT with every assistant turn trained (a tool call and the answer after
 * its result both teach), and finds each row's system-turn prefix: everything before the second
 * `<|im_start|>`, when the first turn is a system turn.
 */
export function tokenizeExamples(examples: readonly TinyChatExample[], deps: ChatTemplateDeps): TrainingRow[] {
  const turnStart = deps.tokenizer.tokenId("<|im_start|>");
  const system = deps.tokenizer.encode("system", { addSpecialTokens: false });
  if (turnStart === undefined) throw new Error("the tokenizer has no <|im_start|> token");
  return examples.map((example, index) => {
    const row = tokenizeSftExample({ messages: example.messages, ...(example.tools ? { tools: example.tools as unknown as Record<string, unknown>[] } : {}) }, deps, "all", ["examples", index]);
    let prefixLength = 0;
    if (row.tokens[0] === turnStart && system.every((id, i) => row.tokens[1 + i] === id)) {
      prefixLength = row.tokens.indexOf(turnStart, 1);
      if (prefixLength < 0) prefixLength = 0;
    }
    return { ...row, prefixLength };
  });
}

/**
 * One optimizer step's rows as packed training sequences: rows with the same system turn share
 * one copy of it, and a sequence holds as many rows as fit in `maxTokens` (a row longer than that
 * gets a sequence of its own). Order follows the rows' first appearance, so packing is deterministic.
 */
export function packStep(rows: readonly TrainingRow[], maxTokens: number): SftSequence[] {
  const groups = new Map<string, TrainingRow[]>();
  for (const row of rows) {
    const key = Array.from(row.tokens.subarray(0, row.prefixLength)).join(",");
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  const sequences: SftSequence[] = [];
  for (const group of groups.values()) {
    const prefixLength = group[0]!.prefixLength;
    let members: TrainingRow[] = [];
    let length = prefixLength;
    for (const row of group) {
      const added = row.tokens.length - prefixLength;
      if (members.length > 0 && length + added > maxTokens) {
        sequences.push(packSftRows(members, prefixLength));
        [members, length] = [[], prefixLength];
      }
      members.push(row);
      length += added;
    }
    if (members.length > 0) sequences.push(packSftRows(members, prefixLength));
  }
  return sequences;
}
