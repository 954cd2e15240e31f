import type { Tokenizer } from "../tokenizer/types.js";

/**
 * bad_words (`docs/api/chat.md#sampling-order` step 4). Each word is tokenized twice, as written (leading spaces
 * stripped) and with one leading space, so it is banned both at the start of the text and after a
 * space; the space variant is kept only when it gives a different first token and the same number
 * of tokens (otherwise it is not a clean word boundary variant).
 */
export function tokenizeBadWords(tokenizer: Tokenizer, words: readonly string[]): number[][] {
  const sequences: number[][] = [];
  for (const word of words) {
    const bare = word.replace(/^\s+/, "");
    const plain = tokenizer.encode(bare, { addSpecialTokens: false });
    sequences.push(plain);
    const spaced = tokenizer.encode(` ${bare}`, { addSpecialTokens: false });
    if (spaced.length > 0 && spaced.length === plain.length && spaced[0] !== plain[0]) sequences.push(spaced);
  }
  return sequences.filter((sequence) => sequence.length > 0);
}

/**
 * Bans the last token of every bad word whose other tokens are exactly the most recent generated
 * tokens (a one-token word is always banned). Only generated tokens count, never the prompt.
 */
export function banBadWords(logits: Float32Array, length: number, badWords: readonly (readonly number[])[], output: readonly number[]): void {
  for (const word of badWords) {
    const prefixLength = word.length - 1;
    if (prefixLength > output.length) continue;
    let matches = true;
    const offset = output.length - prefixLength;
    for (let i = 0; i < prefixLength; i++) {
      if (output[offset + i] !== word[i]) {
        matches = false;
        break;
      }
    }
    const last = word[prefixLength]!;
    if (matches && last >= 0 && last < length) logits[last] = -Infinity;
  }
}
