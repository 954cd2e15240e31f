import { TooLargeError } from "../query/errors.js";

/**
 * Size limits of one stored call part (a start or an end), as Weave's ClickHouse server applies
 * them: when the JSON fields of a part exceed 3.5 MiB together, the largest are replaced, one by
 * one, with a small placeholder until the part fits. The call is kept; only the oversized fields
 * are lost. A part that cannot fit even then (a huge exception or op name) is refused.
 */
export const CALL_PART_BYTES_LIMIT = 3.5 * 1024 * 1024;
export const TRIMMED_VALUE = '{"_weave":{"error":"<EXCEEDS_LIMITS>"}}';

/**
 * Returns the JSON fields (name → JSON text) of one part, trimmed to fit the limit together with
 * `otherBytes` of plain text fields. Cheap when everything is small: UTF-16 length × 3 bounds the
 * UTF-8 size, so bytes are only counted when that bound exceeds the limit.
 */
export function trimJsonFields<K extends string>(fields: Record<K, string | null>, otherText: string, callId: string, limit = CALL_PART_BYTES_LIMIT): Record<K, string | null> {
  const names = Object.keys(fields) as K[];
  let bound = otherText.length * 3;
  for (const name of names) bound += (fields[name]?.length ?? 0) * 3;
  if (bound <= limit) return fields;

  const sizes = names.map((name) => ({ name, bytes: fields[name] === null ? 0 : Buffer.byteLength(fields[name]!) }));
  const otherBytes = Buffer.byteLength(otherText);
  let total = otherBytes + sizes.reduce((sum, entry) => sum + entry.bytes, 0);
  const trimmed = { ...fields };
  const placeholderBytes = Buffer.byteLength(TRIMMED_VALUE);
  for (const entry of sizes.sort((a, b) => b.bytes - a.bytes)) {
    if (total <= limit) break;
    if (entry.bytes <= placeholderBytes) continue;
    trimmed[entry.name] = TRIMMED_VALUE;
    total -= entry.bytes - placeholderBytes;
  }
  if (total > limit) throw new TooLargeError(`Call ${callId} is too large to store (${total} bytes after trimming its JSON fields)`);
  return trimmed;
}
