/**
 * A small valid-looking value for a JSON Schema from /openapi.json: required properties filled
 * with the simplest value of their type, enums and constants honoured. The fuzzer mutates these,
 * so most requests get past the outer shape and reach the rules deeper in each route.
 */
export function exampleOf(schema: unknown, depth = 0): unknown {
  if (depth > 6 || schema === null || typeof schema !== "object") return null;
  const s = schema as Record<string, unknown>;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ("default" in s && s.default !== undefined) return s.default;
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) {
      const concrete = options.find((option) => (option as Record<string, unknown>)?.type !== "null") ?? options[0];
      return exampleOf(concrete, depth + 1);
    }
  }
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      for (const name of (s.required as string[] | undefined) ?? []) out[name] = exampleOf(properties[name], depth + 1);
      return out;
    }
    case "array":
      return typeof s.minItems === "number" && s.minItems > 0 ? [exampleOf(s.items, depth + 1)] : [];
    case "string":
      return typeof s.minLength === "number" && s.minLength > 1 ? "x".repeat(s.minLength) : "x";
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? s.minimum : 1;
    case "boolean":
      return true;
    default:
      return {};
  }
}

/** The JSON property paths of an example value, for mutations. */
export function pathsOf(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((item, index) => pathsOf(item, [...prefix, index], out));
  else if (value !== null && typeof value === "object") for (const [key, item] of Object.entries(value)) pathsOf(item, [...prefix, key], out);
  return out;
}

/** A copy of `value` with the member at `path` replaced (the whole value for an empty path). */
export function replaceAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let cursor = copy;
  for (const key of path.slice(0, -1)) cursor = cursor[key] as Record<string | number, unknown>;
  cursor[path[path.length - 1]!] = replacement;
  return copy;
}
