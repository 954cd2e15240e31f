import { PyInt } from "../../../python-format.js";
import { parseJsonLossless } from "../../../trace/json/lossless.js";

/**
 * JSON.parse rounds integers beyond 2^53, so `"seed": 9223372036854775808` (outside signed 64-bit)
 * would arrive as 2^63 and look in range. A top-level integer that a double cannot hold is replaced
 * by its exact decimal text, which the lax integer fields read (and range-check) exactly, as
 * pydantic's lax mode does with numeric strings. The text is parsed again only in that rare case.
 */
export function keepExactTopLevelIntegers(body: unknown, text: string): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  const unsafe = Object.keys(record).filter((key) => {
    const value = record[key];
    return typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value);
  });
  if (unsafe.length === 0) return body;
  const exact = parseJsonLossless(text) as Record<string, unknown>;
  for (const key of unsafe) {
    const value = exact[key];
    if (value instanceof PyInt) record[key] = value.value.toString();
  }
  return body;
}
