import fc from "fast-check";

/**
 * Random and mutated parts of a request besides its body, for the fuzz suite: headers
 * (content type, a Content-Length that does not match the body, authorization in every shape a
 * client might get wrong, accept) and raw query strings built from a route's own query
 * parameters. Each arbitrary says what it produces; the suite combines them per request.
 */

export const hostileStrings = ["", "x", "../../etc/passwd", "%00", "\u0000", "a".repeat(5000), "💥", "null", "-1", "1e309", "00000000-0000-0000-0000-000000000000", "weave:///bob/p/call/x"];

/** A Content-Type header, or none. */
export const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant("application/json") },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined,
      "application/json; charset=utf-8",
      "application/json; charset=latin1",
      "APPLICATION/JSON",
      "application/jsonl",
      "text/plain",
      "text/plain; charset=utf-8",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
      "multipart/form-data; boundary=xyz",
      "application/octet-stream",
      "application/xml",
      "*/*",
      ";;;",
      "application/json; boundary=\u0000",
      "a".repeat(2000),
    ),
  },
);

/** How the sent Content-Length relates to the body: its own length, or off by some bytes. */
export const contentLengthDelta = fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.constantFrom(-1, 1, -10, 1000, 1 << 30) });

export type AuthVariant = "bearer" | "basic" | "lowercase-bearer" | "none" | "empty-bearer" | "wrong-key" | "basic-wrong-user" | "basic-no-colon" | "basic-not-base64" | "key-with-spaces" | "unknown-scheme" | "huge";

/** How the (valid) key is presented; most requests present it properly, so they reach the routes. */
export const authVariant: fc.Arbitrary<AuthVariant> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom<AuthVariant>("bearer", "basic") },
  {
    weight: 2,
    arbitrary: fc.constantFrom<AuthVariant>("lowercase-bearer", "none", "empty-bearer", "wrong-key", "basic-wrong-user", "basic-no-colon", "basic-not-base64", "key-with-spaces", "unknown-scheme", "huge"),
  },
);

/** The Authorization header of a variant for `key` (undefined: none sent). */
export function authorizationHeader(variant: AuthVariant, key: string): string | undefined {
  const basic = (text: string) => `Basic ${Buffer.from(text).toString("base64")}`;
  switch (variant) {
    case "bearer":
      return `Bearer ${key}`;
    case "basic":
      return basic(`api:${key}`);
    case "lowercase-bearer":
      return `bearer ${key}`;
    case "none":
      return undefined;
    case "empty-bearer":
      return "Bearer ";
    case "wrong-key":
      return `Bearer ${key.slice(0, -4)}zzzz`;
    case "basic-wrong-user":
      return basic(`someone:${key}`);
    case "basic-no-colon":
      return basic(key);
    case "basic-not-base64":
      return "Basic %%%not-base64%%%";
    case "key-with-spaces":
      return `Bearer  ${key} extra`;
    case "unknown-scheme":
      return `Token ${key}`;
    case "huge":
      return `Bearer ${"k".repeat(16_000)}`;
  }
}

/** An Accept header, or none. */
export const accept = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.constantFrom("application/json", "application/jsonl", "text/event-stream", "*/*", "application/xml", "text/html;q=0.9, */*;q=0.1", "garbage/", "\u00ff\u00fe", "a".repeat(2000)) },
);

const queryValue = fc.oneof(fc.constantFrom(...hostileStrings), fc.integer().map(String), fc.string({ maxLength: 20 }), fc.constantFrom("true", "false", "[]", "{}", "1,2,3"));

const printable = (text: string) => text.replace(/[^\x21-\x7e]|#/g, "");

/** How one query pair is written: encoded as it should be, or raw (`%ZZ`, bare `&`, `[]` keys…). */
const queryPair = (names: readonly string[]) =>
  fc
    .tuple(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }), queryValue, fc.constantFrom("encoded", "raw", "key-only", "array-key"))
    .map(([name, value, style]) => {
      switch (style) {
        case "encoded":
          return `${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
        case "raw":
          // Unencoded, but within what an HTTP request line can carry at all.
          return `${printable(name)}=${printable(value)}`;
        case "key-only":
          return encodeURIComponent(name);
        case "array-key":
          return `${encodeURIComponent(name)}[]=${encodeURIComponent(value)}`;
      }
    });

/**
 * A raw query string (without `?`) for a route with these query parameter names: its own names
 * mostly (each may repeat), plus random ones and stray `&`, `%ZZ` or `%` pieces.
 */
export function queryString(names: readonly string[]): fc.Arbitrary<string> {
  const known = names.length > 0 ? names : ["limit", "after", "before", "order", "project", "x"];
  return fc
    .tuple(fc.array(queryPair(known), { maxLength: 4 }), fc.oneof({ weight: 8, arbitrary: fc.constant("") }, { weight: 2, arbitrary: fc.constantFrom("&", "%ZZ", "%", "&&=&", "=", "%E2%82") }))
    .map(([pairs, stray]) => [...pairs, ...(stray ? [stray] : [])].join("&"));
}
