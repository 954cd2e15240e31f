import type { Tokenizer } from "../tokenizer/types.js";
import { isValidUtf8Fragment } from "./utf8.js";

export interface Vocabulary {
  /** Per id, what xgrammar's `byte_level` reader takes ("" for a token no grammar may produce). */
  encoded: string[];
  /** Per id, the bytes of a token a grammar may produce (stop tokens excluded); undefined for the others. */
  producible: (Uint8Array | undefined)[];
}

/**
 * The vocabulary as xgrammar takes it: each token's exact bytes written with GPT-2's printable byte
 * names (so any byte sequence survives the trip into the WASM, even part of a UTF-8 character),
 * whatever kind of tokenizer the model has.
 *
 * An empty string is xgrammar's mark for a token no grammar may produce. It goes to:
 * - special tokens other than the stop tokens: the engine hides special tokens from the output text
 *   by default, so one inside, say, a JSON string would break the constraint the client sees;
 * - tokens whose bytes can never be part of valid UTF-8 (xgrammar would accept some of them).
 * Ids from the tokenizer's size up to the logits width are padding, which xgrammar masks itself.
 */
export function buildVocabulary(tokenizer: Tokenizer, stopTokenIds: readonly number[]): Vocabulary {
  const stops = new Set(stopTokenIds);
  const length = Math.max(tokenizer.vocabSize, ...stopTokenIds.map((id) => id + 1));
  const names = byteNames();
  const encoded = new Array<string>(length);
  const producible = new Array<Uint8Array | undefined>(length);
  for (let id = 0; id < length; id++) {
    const bytes = id < tokenizer.vocabSize && (stops.has(id) || !tokenizer.isSpecial(id)) ? tokenBytes(tokenizer, id) : undefined;
    let text = "";
    if (bytes && (stops.has(id) || isValidUtf8Fragment(bytes))) {
      for (const byte of bytes) text += names[byte];
      if (!stops.has(id) && bytes.length > 0) producible[id] = bytes;
    }
    encoded[id] = text;
  }
  return { encoded, producible };
}

function tokenBytes(tokenizer: Tokenizer, id: number): Uint8Array | undefined {
  try {
    return tokenizer.tokenBytes(id);
  } catch {
    return undefined; // a hole in the vocabulary: never producible
  }
}

let names: string[] | undefined;

/** GPT-2's printable stand-ins for the 256 byte values (the inverse of xgrammar's byte-level decoder). */
function byteNames(): string[] {
  if (names) return names;
  const printable = (byte: number) => (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || (byte >= 174 && byte <= 255);
  names = [];
  let next = 256;
  for (let byte = 0; byte < 256; byte++) names.push(String.fromCharCode(printable(byte) ? byte : next++));
  return names;
}
