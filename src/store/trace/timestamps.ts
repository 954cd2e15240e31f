/**
 * Trace timestamps are stored as fixed-width ISO-8601 UTC text with microseconds
 * (`2024-05-01T12:00:00.123456Z`): the Python SDK sends microseconds, and the fixed width makes text
 * order equal time order on both dialects.
 */

const ISO_PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** A point in time: Unix milliseconds plus the microseconds within that millisecond (0..999). */
export interface Instant {
  ms: number;
  micro: number;
}

/** The instant of a canonical or ISO timestamp; undefined when unparseable. */
export function parseTimestamp(value: string): Instant | undefined {
  const match = ISO_PATTERN.exec(value.trim());
  if (!match) return undefined;
  const [, y, mo, d, h = "0", mi = "0", s = "0", fraction = "", zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined;
  // Date.UTC maps years 0-99 to 1900-1999, so set the full year explicitly.
  const check = new Date(0);
  check.setUTCFullYear(year, month - 1, day);
  check.setUTCHours(hour, minute, second, 0);
  const ms = check.getTime();
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return undefined;
  const micros = Number(`${fraction}000000`.slice(0, 6));
  return { ms: ms - zoneOffsetMinutes(zone) * 60_000 + Math.floor(micros / 1000), micro: micros % 1000 };
}

function zoneOffsetMinutes(zone: string | undefined): number {
  if (!zone || zone === "Z" || zone === "z") return 0;
  const sign = zone.startsWith("-") ? -1 : 1;
  const digits = zone.slice(1).replace(":", "");
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || "0"));
}

/** The canonical text of an instant. */
export function formatTimestamp(instant: Instant): string {
  return `${new Date(instant.ms).toISOString().slice(0, 23)}${String(instant.micro).padStart(3, "0")}Z`;
}

/**
 * Canonical text of a request timestamp: ISO-8601 with or without zone (no zone means UTC), or a
 * Unix time in seconds (milliseconds when larger than 2e10, as pydantic reads numbers).
 * Undefined when the value is not a time.
 */
export function canonicalTimestamp(value: unknown): string | undefined {
  let instant: Instant | undefined;
  if (typeof value === "string") {
    const utc = canonicalUtcText(value);
    if (utc !== undefined) return utc;
    instant = parseTimestamp(value);
  } else if (typeof value === "number" && Number.isFinite(value)) {
    const totalMs = Math.abs(value) > 2e10 ? value : value * 1000;
    const ms = Math.floor(totalMs);
    instant = { ms, micro: Math.min(999, Math.round((totalMs - ms) * 1000)) };
  }
  if (!instant || !Number.isFinite(instant.ms)) return undefined;
  const year = new Date(instant.ms).getUTCFullYear();
  if (!(year >= 1 && year <= 9999)) return undefined;
  return formatTimestamp(instant);
}

const UTC_TEXT = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]00:?00)$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The canonical text of the form SDKs send (`2024-05-01T12:00:00.123Z`, or `+00:00`), checked and
 * rewritten as text, without building dates: every call carries two timestamps, and batches carry
 * thousands. Undefined for any other form, which `parseTimestamp` then reads; the result is the same.
 */
export function canonicalUtcText(value: string): string | undefined {
  if (!UTC_TEXT.test(value)) return undefined;
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(5, 7));
  const day = Number(value.slice(8, 10));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const monthDays = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (year < 1 || monthDays === undefined || day < 1 || day > monthDays) return undefined;
  if (Number(value.slice(11, 13)) > 23 || Number(value.slice(14, 16)) > 59 || Number(value.slice(17, 19)) > 59) return undefined;
  let end = 20;
  if (value.charCodeAt(19) === 46 /* . */) while (end < value.length && value.charCodeAt(end) >= 48 && value.charCodeAt(end) <= 57) end++;
  const fraction = value.charCodeAt(19) === 46 ? value.slice(20, end) : "";
  return `${value.slice(0, 10)}T${value.slice(11, 19)}.${`${fraction}000000`.slice(0, 6)}Z`;
}

export function nowTimestamp(): string {
  return formatTimestamp({ ms: Date.now(), micro: 0 });
}

/** Whole milliseconds between two canonical timestamps (truncated, as Weave reports latency). */
export function millisBetween(start: string, end: string): number {
  const a = parseTimestamp(start);
  const b = parseTimestamp(end);
  if (!a || !b) return 0;
  return Math.trunc(b.ms - a.ms + (b.micro - a.micro) / 1000);
}
