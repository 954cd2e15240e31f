/**
 * xgrammar reads UTF-8 leniently: it takes overlong forms (C0 A7 for "'"), surrogates (ED A0 80)
 * and code points past U+10FFFF as characters, and free-text regions (structural tags) take any
 * bytes at all. A model with a token for every byte could then emit bytes that decode to U+FFFD
 * instead of what the grammar matched. So on top of xgrammar's mask:
 * - tokens that can never be part of valid UTF-8 are never allowed (`isValidUtf8Fragment`), and
 * - `Utf8Masks` allows, at each step, only tokens that continue the output as valid UTF-8: after a
 *   character's first byte, exactly its continuation bytes (in RFC 3629's narrowed ranges); at a
 *   character boundary, no stray continuation byte; and a stop token only at a boundary.
 */

/** The allowed range of the byte after each lead byte that narrows it (RFC 3629). */
const NARROW_SECOND: Record<number, [number, number]> = { 0xe0: [0xa0, 0xbf], 0xed: [0x80, 0x9f], 0xf0: [0x90, 0xbf], 0xf4: [0x80, 0x8f] };

/** How many continuation bytes follow a lead byte; undefined for a byte that cannot lead. */
function continuationCount(byte: number): number | undefined {
  if (byte < 0x80) return 0;
  if (byte >= 0xc2 && byte <= 0xdf) return 1;
  if (byte >= 0xe0 && byte <= 0xef) return 2;
  if (byte >= 0xf0 && byte <= 0xf4) return 3;
  return undefined;
}

const isContinuation = (byte: number) => byte >= 0x80 && byte <= 0xbf;

/**
 * Whether a token's bytes can appear inside valid UTF-8: it may start with up to three continuation
 * bytes (ending a character begun by earlier tokens) and end partway through a character, but every
 * character it starts must be well formed as far as it goes.
 */
export function isValidUtf8Fragment(bytes: Uint8Array): boolean {
  let i = 0;
  while (i < bytes.length && i < 3 && isContinuation(bytes[i]!)) i++;
  while (i < bytes.length) {
    const lead = bytes[i++]!;
    const count = continuationCount(lead);
    if (count === undefined) return false;
    for (let k = 0; k < count && i < bytes.length; k++, i++) {
      const [low, high] = k === 0 ? (NARROW_SECOND[lead] ?? [0x80, 0xbf]) : [0x80, 0xbf];
      if (bytes[i]! < low || bytes[i]! > high) return false;
    }
  }
  return true;
}

/**
 * Where the output stands in UTF-8: `need << 8 | lead`, with `need` the continuation bytes still
 * owed and `lead` the lead byte when the very next byte is narrowed by it (else 0). 0 is a boundary.
 */
export type Utf8State = number;
export const UTF8_BOUNDARY: Utf8State = 0;

/** The state after `bytes` (of a valid fragment) follow `state`. */
export function advanceUtf8(state: Utf8State, bytes: Uint8Array): Utf8State {
  let need = state >> 8;
  let lead = state & 0xff;
  for (const byte of bytes) {
    if (need > 0) {
      need--;
      lead = 0;
    } else {
      need = continuationCount(byte) ?? 0;
      lead = NARROW_SECOND[byte] ? byte : 0;
    }
  }
  return (need << 8) | lead;
}

/** Per state, the bitmask (xgrammar's layout) of the tokens that keep the output valid UTF-8. */
export class Utf8Masks {
  private readonly leadingContinuations: Int8Array;
  private readonly masks = new Map<Utf8State, Int32Array>();

  constructor(
    /** Per id, the bytes of a token a grammar may produce; undefined for the others. */
    private readonly bytes: readonly (Uint8Array | undefined)[],
    private readonly stopTokenIds: ReadonlySet<number>,
    private readonly vocabSize: number,
  ) {
    this.leadingContinuations = new Int8Array(vocabSize).fill(-1);
    bytes.forEach((token, id) => {
      if (!token || token.length === 0 || id >= vocabSize) return;
      let count = 0;
      while (count < token.length && isContinuation(token[count]!)) count++;
      this.leadingContinuations[id] = count;
    });
    // Built up front (a few ms each for a large vocabulary) rather than in the middle of a decode step.
    for (const state of [UTF8_BOUNDARY, 1 << 8, 2 << 8, 3 << 8, ...Object.keys(NARROW_SECOND).map((lead) => ((Number(lead) >= 0xf0 ? 3 : 2) << 8) | Number(lead))]) {
      this.masks.set(state, this.build(state));
    }
  }

  bytesOf(tokenId: number): Uint8Array | undefined {
    return this.bytes[tokenId];
  }

  /** The tokens allowed in `state` (one of eight). */
  allowed(state: Utf8State): Int32Array {
    let mask = this.masks.get(state);
    if (!mask) {
      mask = this.build(state);
      this.masks.set(state, mask);
    }
    return mask;
  }

  private build(state: Utf8State): Int32Array {
    const need = state >> 8;
    const narrowed = NARROW_SECOND[state & 0xff];
    const mask = new Int32Array(Math.ceil(this.vocabSize / 32));
    const allow = (id: number) => (mask[id >>> 5]! |= 1 << (id & 31));
    for (const id of this.stopTokenIds) if (need === 0 && id < this.vocabSize) allow(id);
    for (let id = 0; id < this.vocabSize; id++) {
      const continuations = this.leadingContinuations[id]!;
      if (continuations < 0 || this.stopTokenIds.has(id)) continue;
      const length = this.bytes[id]!.length;
      // At a boundary: no continuation bytes first. Mid-character: exactly the owed ones, or a
      // token made only of continuation bytes that still leaves some owed.
      const fits = need === 0 ? continuations === 0 : continuations === need || (continuations === length && length < need);
      if (!fits) continue;
      if (narrowed && need > 0) {
        const first = this.bytes[id]![0]!;
        if (first < narrowed[0] || first > narrowed[1]) continue;
      }
      allow(id);
    }
    return mask;
  }
}
