import { type AttributeValue, type KeyValues, OtlpFormatError, type OtlpResourceSpans, type OtlpSpan } from "./types.js";

/**
 * OTLP/JSON (`application/json`) into the decoded shape: lowerCamelCase field names (snake_case
 * also accepted), ids as hex (base64, the generic protobuf JSON form, also accepted), 64-bit
 * integers as strings or numbers, enums as numbers or names.
 */
type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);

function get(object: Json, camel: string): unknown {
  if (camel in object) return object[camel];
  return object[camel.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)];
}

function list(object: Json, field: string): unknown[] {
  const value = get(object, field);
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OtlpFormatError(`${field} must be a list`);
  return value;
}

function id(value: unknown, field: string): string {
  if (value === undefined || value === null || value === "") return "";
  if (typeof value !== "string") throw new OtlpFormatError(`${field} must be a string`);
  if (/^[0-9a-fA-F]+$/.test(value) && (value.length === 16 || value.length === 32)) return value.toLowerCase();
  const bytes = Buffer.from(value, "base64");
  if (bytes.length === 8 || bytes.length === 16) return bytes.toString("hex");
  throw new OtlpFormatError(`${field} is neither hex nor base64 of 8 or 16 bytes`);
}

function nanos(value: unknown, field: string): bigint {
  if (value === undefined || value === null) return 0n;
  if ((typeof value === "string" && /^\d+$/.test(value)) || (typeof value === "number" && Number.isInteger(value) && value >= 0)) return BigInt(value);
  throw new OtlpFormatError(`${field} must be an unsigned integer`);
}

function count(value: unknown): number {
  const number = typeof value === "string" ? Number(value) : typeof value === "number" ? value : 0;
  return Number.isFinite(number) ? number : 0;
}

function enumValue(value: unknown, names: string[]): number {
  if (typeof value === "number") return value;
  if (typeof value === "string") {
    const index = names.indexOf(value);
    if (index >= 0) return index;
  }
  return 0;
}

const SPAN_KINDS = ["SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"];
const STATUS_CODES = ["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"];

function anyValue(value: unknown): AttributeValue {
  if (!isObject(value)) return null;
  if ("stringValue" in value || "string_value" in value) return String(get(value, "stringValue"));
  if ("boolValue" in value || "bool_value" in value) return get(value, "boolValue") === true;
  if ("intValue" in value || "int_value" in value) {
    const raw = get(value, "intValue");
    const big = typeof raw === "string" && /^-?\d+$/.test(raw) ? BigInt(raw) : typeof raw === "number" ? BigInt(Math.trunc(raw)) : 0n;
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big.toString();
  }
  if ("doubleValue" in value || "double_value" in value) {
    const raw = get(value, "doubleValue");
    return typeof raw === "number" ? raw : raw === "NaN" ? Number.NaN : raw === "Infinity" ? Number.POSITIVE_INFINITY : raw === "-Infinity" ? Number.NEGATIVE_INFINITY : Number(raw);
  }
  if ("arrayValue" in value || "array_value" in value) {
    const array = get(value, "arrayValue");
    return isObject(array) ? list(array, "values").map(anyValue) : [];
  }
  if ("kvlistValue" in value || "kvlist_value" in value) {
    const kvlist = get(value, "kvlistValue");
    return isObject(kvlist) ? Object.fromEntries(keyValues(kvlist, "values")) : {};
  }
  if ("bytesValue" in value || "bytes_value" in value) return String(get(value, "bytesValue"));
  return null;
}

function keyValues(object: Json, field: string): KeyValues {
  return list(object, field).map((item) => {
    if (!isObject(item) || typeof item.key !== "string") throw new OtlpFormatError(`${field} items need a string key`);
    return [item.key, anyValue(item.value)];
  });
}

function span(value: unknown): OtlpSpan {
  if (!isObject(value)) throw new OtlpFormatError("spans must be objects");
  const status = isObject(get(value, "status")) ? (get(value, "status") as Json) : {};
  return {
    traceId: id(get(value, "traceId"), "traceId"),
    spanId: id(get(value, "spanId"), "spanId"),
    traceState: String(get(value, "traceState") ?? ""),
    parentSpanId: id(get(value, "parentSpanId"), "parentSpanId"),
    flags: count(get(value, "flags")),
    name: String(get(value, "name") ?? ""),
    kind: enumValue(get(value, "kind"), SPAN_KINDS),
    startTimeUnixNano: nanos(get(value, "startTimeUnixNano"), "startTimeUnixNano"),
    endTimeUnixNano: nanos(get(value, "endTimeUnixNano"), "endTimeUnixNano"),
    attributes: keyValues(value, "attributes"),
    droppedAttributesCount: count(get(value, "droppedAttributesCount")),
    events: list(value, "events").map((event) => {
      const e = isObject(event) ? event : {};
      return { timeUnixNano: nanos(get(e, "timeUnixNano"), "timeUnixNano"), name: String(get(e, "name") ?? ""), attributes: keyValues(e, "attributes"), droppedAttributesCount: count(get(e, "droppedAttributesCount")) };
    }),
    droppedEventsCount: count(get(value, "droppedEventsCount")),
    links: list(value, "links").map((link) => {
      const l = isObject(link) ? link : {};
      return {
        traceId: id(get(l, "traceId"), "traceId"),
        spanId: id(get(l, "spanId"), "spanId"),
        traceState: String(get(l, "traceState") ?? ""),
        attributes: keyValues(l, "attributes"),
        droppedAttributesCount: count(get(l, "droppedAttributesCount")),
        flags: count(get(l, "flags")),
      };
    }),
    droppedLinksCount: count(get(value, "droppedLinksCount")),
    status: { code: enumValue(get(status, "code"), STATUS_CODES), message: String(get(status, "message") ?? "") },
  };
}

/** Decodes an OTLP/JSON `ExportTraceServiceRequest`; throws OtlpFormatError on malformed input. */
export function decodeExportTraceJson(body: unknown): OtlpResourceSpans[] {
  if (!isObject(body)) throw new OtlpFormatError("body must be a JSON object");
  return list(body, "resourceSpans").map((item) => {
    if (!isObject(item)) throw new OtlpFormatError("resourceSpans items must be objects");
    const resource = isObject(get(item, "resource")) ? (get(item, "resource") as Json) : {};
    return {
      resource: { attributes: keyValues(resource, "attributes"), droppedAttributesCount: count(get(resource, "droppedAttributesCount")) },
      spans: list(item, "scopeSpans").flatMap((scope) => (isObject(scope) ? list(scope, "spans").map(span) : [])),
    };
  });
}
