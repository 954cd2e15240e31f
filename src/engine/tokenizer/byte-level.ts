/**
 * GPT-2's byte-level alphabet (`bytes_to_unicode`): every byte maps to one printable character, so a
 * byte-level BPE vocabulary is made of ordinary strings. Printable Latin-1 bytes map to themselves;
 * the others (control characters, space, …) to U+0100 onwards, in byte order (space → `Ġ`).
 */
function buildByteToChar(): string[] {
  const chars: string[] = new Array(256);
  let next = 256;
  for (let byte = 0; byte < 256; byte++) {
    const printable = (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || (byte >= 174 && byte <= 255);
    chars[byte] = String.fromCharCode(printable ? byte : next++);
  }
  return chars;
}

export const BYTE_TO_CHAR: readonly string[] = buildByteToChar();

export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((char, byte) => [char, byte]));

const encoder = new TextEncoder();

/** The byte-level string of a text: its UTF-8 bytes, each as its alphabet character. */
export function toByteLevel(text: string): string {
  let out = "";
  for (const byte of encoder.encode(text)) out += BYTE_TO_CHAR[byte];
  return out;
}

/** The bytes a byte-level string stands for; characters outside the alphabet count as their UTF-8. */
export function fromByteLevel(piece: string): Uint8Array {
  const bytes: number[] = [];
  for (const char of piece) {
    const byte = CHAR_TO_BYTE.get(char);
    if (byte !== undefined) bytes.push(byte);
    else bytes.push(...encoder.encode(char));
  }
  return Uint8Array.from(bytes);
}
