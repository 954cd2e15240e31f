import { ByteTokenizer } from "./byte-tokenizer.js";
import { seededRandom } from "./constrained-walk.js";

const CHARACTERS = ' abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789{}[]":,.-_\n\téü€中文';

/**
 * A byte-level tokenizer with `size` tokens in all (256 bytes, distinct random pieces of 2–9
 * characters drawn from JSON-ish text, and the special tokens), the scale of a real model's
 * vocabulary (Qwen2: 151,643 tokens), for tests and benchmarks that need the size, not the merges.
 */
export function syntheticTokenizer(size: number, seed = 1): ByteTokenizer {
  const random = seededRandom(seed);
  const pieces = new Set<string>();
  const wanted = size - 256 - 3;
  while (pieces.size < wanted) {
    const length = 2 + Math.floor(random() * 8);
    let piece = "";
    for (let i = 0; i < length; i++) piece += CHARACTERS[Math.floor(random() * CHARACTERS.length)];
    pieces.add(piece);
  }
  return new ByteTokenizer([...pieces]);
}
