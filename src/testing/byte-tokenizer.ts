import type { Tokenizer } from "../engine/tokenizer/types.js";

/**
 * A small but complete byte-level tokenizer for tests that need a vocabulary without a model:
 * ids 0–255 are single bytes, then multi-byte pieces (matched greedily, longest first), then special
 * tokens. Byte tokens are named like GPT-2's byte-level vocabulary (`Ġ` for a space), so code that
 * reads `tokenString` sees the same conventions as with a real BPE vocabulary.
 */
export class ByteTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosTokenId: number | undefined = undefined;
  readonly eosTokenId: number;
  private readonly pieces: Uint8Array[] = [];
  private readonly strings: string[] = [];
  private readonly ids = new Map<string, number>();
  private readonly special = new Set<number>();
  private readonly specialText: string[] = [];

  constructor(multiBytePieces: string[] = DEFAULT_PIECES, specialTokens: string[] = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]) {
    const byteNames = gpt2ByteNames();
    for (let byte = 0; byte < 256; byte++) this.add(Uint8Array.of(byte), byteNames[byte]!);
    const encoder = new TextEncoder();
    for (const piece of multiBytePieces) {
      const bytes = encoder.encode(piece);
      this.add(bytes, [...bytes].map((byte) => byteNames[byte]).join(""));
    }
    for (const token of specialTokens) {
      const id = this.add(encoder.encode(token), token);
      this.special.add(id);
      this.specialText[id] = token;
    }
    this.vocabSize = this.pieces.length;
    this.eosTokenId = this.ids.get(specialTokens[0]!)!;
  }

  private add(bytes: Uint8Array, name: string): number {
    const id = this.pieces.length;
    this.pieces.push(bytes);
    this.strings.push(name);
    this.ids.set(name, id);
    return id;
  }

  encode(text: string, options: { addSpecialTokens?: boolean } = {}): number[] {
    const out: number[] = [];
    let rest = text;
    while (rest.length > 0) {
      const special = this.specialText.findIndex((token) => token !== undefined && rest.startsWith(token));
      if (special >= 0) {
        out.push(special);
        rest = rest.slice(this.specialText[special]!.length);
        continue;
      }
      const nextSpecial = Math.min(...this.specialText.filter(Boolean).map((token) => (rest.indexOf(token) >= 0 ? rest.indexOf(token) : Infinity)));
      const chunk = rest.slice(0, Number.isFinite(nextSpecial) ? nextSpecial : rest.length);
      out.push(...this.encodeBytes(new TextEncoder().encode(chunk)));
      rest = rest.slice(chunk.length);
    }
    if (options.addSpecialTokens && this.bosTokenId !== undefined) out.unshift(this.bosTokenId);
    return out;
  }

  private encodeBytes(bytes: Uint8Array): number[] {
    const out: number[] = [];
    let position = 0;
    while (position < bytes.length) {
      let best = bytes[position]!;
      let bestLength = 1;
      for (let id = 256; id < this.pieces.length; id++) {
        if (this.special.has(id)) continue;
        const piece = this.pieces[id]!;
        if (piece.length > bestLength && startsWith(bytes, position, piece)) {
          best = id;
          bestLength = piece.length;
        }
      }
      out.push(best);
      position += bestLength;
    }
    return out;
  }

  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean; spacesBetweenSpecialTokens?: boolean } = {}): string {
    const chunks: Uint8Array[] = [];
    for (const id of ids) {
      if (this.special.has(id) && options.skipSpecialTokens) continue;
      chunks.push(this.tokenBytes(id));
    }
    return new TextDecoder().decode(concat(chunks));
  }

  tokenBytes(id: number): Uint8Array {
    const bytes = this.pieces[id];
    if (!bytes) throw new RangeError(`token id ${id} is outside the vocabulary of ${this.vocabSize}`);
    return bytes;
  }

  tokenString(id: number): string | undefined {
    return this.strings[id];
  }

  tokenId(token: string): number | undefined {
    return this.ids.get(token);
  }

  isSpecial(id: number): boolean {
    return this.special.has(id);
  }
}

const DEFAULT_PIECES = [" the", " a", "he", "ll", "llo", "hello", " world", '{"', '":', '": ', ', "', '"}', "true", "false", "null", "ing", " is", "00", "12", "<think>", "</think>", "<tool_call>", "</tool_call>", "é", "€"];

function startsWith(bytes: Uint8Array, offset: number, piece: Uint8Array): boolean {
  if (offset + piece.length > bytes.length) return false;
  for (let i = 0; i < piece.length; i++) if (bytes[offset + i] !== piece[i]) return false;
  return true;
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** GPT-2's printable names for the 256 byte values (bytes_to_unicode). */
function gpt2ByteNames(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const names: string[] = new Array(256);
  let extra = 0;
  for (let byte = 0; byte < 256; byte++) {
    names[byte] = printable.includes(byte) ? String.fromCharCode(byte) : String.fromCharCode(256 + extra++);
  }
  return names;
}
