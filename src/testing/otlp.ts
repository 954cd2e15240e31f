/**
 * A minimal protobuf writer for OTLP `ExportTraceServiceRequest` bodies in tests, written from
 * the public opentelemetry-proto field numbers (independent of the server's decoder).
 */
export type TestValue = string | number | boolean | TestValue[] | { kv: Record<string, TestValue> } | { bytes: Uint8Array } | { double: number } | { int: bigint };

export interface TestSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startNanos: bigint;
  endNanos: bigint;
  attributes?: Record<string, TestValue>;
  events?: { name: string; timeNanos: bigint; attributes?: Record<string, TestValue> }[];
  status?: { code: number; message?: string };
}

export interface TestResourceSpans {
  resource: Record<string, TestValue>;
  spans: TestSpan[];
}

function varint(value: bigint | number): number[] {
  let rest = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (rest > 0x7fn) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest));
  return out;
}

const key = (field: number, wire: number) => varint((field << 3) | wire);
const lengthDelimited = (field: number, bytes: number[] | Uint8Array) => [...key(field, 2), ...varint(bytes.length), ...bytes];
const text = (field: number, value: string) => lengthDelimited(field, [...Buffer.from(value, "utf8")]);
const hexBytes = (field: number, hex: string) => lengthDelimited(field, [...Buffer.from(hex, "hex")]);

function fixed64(field: number, value: bigint): number[] {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64LE(value);
  return [...key(field, 1), ...buffer];
}

function anyValue(value: TestValue): number[] {
  if (typeof value === "string") return text(1, value);
  if (typeof value === "boolean") return [...key(2, 0), ...varint(value ? 1 : 0)];
  if (typeof value === "number") {
    if (Number.isInteger(value)) return [...key(3, 0), ...varint(value)];
    return anyValue({ double: value });
  }
  if (Array.isArray(value))
    return lengthDelimited(
      5,
      value.flatMap((item) => lengthDelimited(1, anyValue(item))),
    );
  if ("kv" in value) return lengthDelimited(6, keyValues(1, value.kv));
  if ("bytes" in value) return lengthDelimited(7, value.bytes);
  if ("int" in value) return [...key(3, 0), ...varint(value.int)];
  const buffer = Buffer.alloc(8);
  buffer.writeDoubleLE(value.double);
  return [...key(4, 1), ...buffer];
}

function keyValues(field: number, values: Record<string, TestValue> = {}): number[] {
  return Object.entries(values).flatMap(([name, value]) => lengthDelimited(field, [...text(1, name), ...lengthDelimited(2, anyValue(value))]));
}

function span(s: TestSpan): number[] {
  return [
    ...hexBytes(1, s.traceId),
    ...hexBytes(2, s.spanId),
    ...(s.parentSpanId ? hexBytes(4, s.parentSpanId) : []),
    ...text(5, s.name),
    ...key(6, 0),
    ...varint(s.kind ?? 1),
    ...fixed64(7, s.startNanos),
    ...fixed64(8, s.endNanos),
    ...keyValues(9, s.attributes),
    ...(s.events ?? []).flatMap((event) => lengthDelimited(11, [...fixed64(1, event.timeNanos), ...text(2, event.name), ...keyValues(3, event.attributes)])),
    ...(s.status ? lengthDelimited(15, [...(s.status.message ? text(2, s.status.message) : []), ...key(3, 0), ...varint(s.status.code)]) : []),
  ];
}

export function encodeOtlp(resources: TestResourceSpans[]): Buffer {
  return Buffer.from(
    resources.flatMap((resource) =>
      lengthDelimited(1, [...lengthDelimited(1, keyValues(1, resource.resource)), ...lengthDelimited(2, [...lengthDelimited(1, text(1, "test-scope")), ...resource.spans.flatMap((s) => lengthDelimited(2, span(s)))])]),
    ),
  );
}

/** The same request in OTLP/JSON. */
export function otlpJson(resources: TestResourceSpans[]): unknown {
  const value = (v: TestValue): unknown => {
    if (typeof v === "string") return { stringValue: v };
    if (typeof v === "boolean") return { boolValue: v };
    if (typeof v === "number") return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
    if (Array.isArray(v)) return { arrayValue: { values: v.map(value) } };
    if ("kv" in v) return { kvlistValue: { values: attrs(v.kv) } };
    if ("bytes" in v) return { bytesValue: Buffer.from(v.bytes).toString("base64") };
    if ("int" in v) return { intValue: v.int.toString() };
    return { doubleValue: v.double };
  };
  const attrs = (values: Record<string, TestValue> = {}) => Object.entries(values).map(([k, v]) => ({ key: k, value: value(v) }));
  return {
    resourceSpans: resources.map((resource) => ({
      resource: { attributes: attrs(resource.resource) },
      scopeSpans: [
        {
          scope: { name: "test-scope" },
          spans: resource.spans.map((s) => ({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            kind: s.kind ?? 1,
            startTimeUnixNano: s.startNanos.toString(),
            endTimeUnixNano: s.endNanos.toString(),
            attributes: attrs(s.attributes),
            events: (s.events ?? []).map((event) => ({ name: event.name, timeUnixNano: event.timeNanos.toString(), attributes: attrs(event.attributes) })),
            status: s.status ? { code: s.status.code, message: s.status.message ?? "" } : undefined,
          })),
        },
      ],
    })),
  };
}
