import { randomBytes } from "node:crypto";

let lastMs = -1;
let sequence = 0;

/**
 * A UUIDv7 (RFC 9562), the id format Weave servers generate (`docs/api/trace.md#json-rules`): 48 bits of
 * Unix milliseconds, then a 12-bit counter that keeps ids from one process strictly increasing
 * within a millisecond, then random bits.
 */
export function uuidv7(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = randomBytes(2).readUInt16BE(0) & 0x1ff;
  } else {
    sequence++;
    if (sequence > 0xfff) {
      // Counter exhausted: borrow the next millisecond, as RFC 9562 allows.
      lastMs++;
      sequence = 0;
    }
  }
  const bytes = randomBytes(16);
  const ms = lastMs;
  bytes[0] = Math.floor(ms / 2 ** 40) & 0xff;
  bytes[1] = Math.floor(ms / 2 ** 32) & 0xff;
  bytes[2] = (ms >>> 24) & 0xff;
  bytes[3] = (ms >>> 16) & 0xff;
  bytes[4] = (ms >>> 8) & 0xff;
  bytes[5] = ms & 0xff;
  bytes[6] = 0x70 | ((sequence >>> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
