import { type AttributeValue, type KeyValues, type OtlpEvent, OtlpFormatError, type OtlpLink, type OtlpResourceSpans, type OtlpSpan } from "./types.js";

/**
 * A decoder for the OTLP `ExportTraceServiceRequest` protobuf (opentelemetry-proto,
 * `collector/trace/v1`, `trace/v1`, `common/v1`, `resource/v1`), written against the public field
 * numbers. Unknown fields are skipped, as protobuf requires.
 */
class Reader {
  pos = 0;
  constructor(
    private readonly buf: Uint8Array,
    private readonly end = buf.length,
  ) {}

  done(): boolean {
    return this.pos >= this.end;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.end) throw new OtlpFormatError("truncated varint");
      const byte = this.buf[this.pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new OtlpFormatError("varint too long");
    }
  }

  uint(): number {
    return Number(BigInt.asUintN(32, this.varint()));
  }

  fixed64(): bigint {
    const view = this.take(8);
    return new DataView(view.buffer, view.byteOffset, 8).getBigUint64(0, true);
  }

  fixed32(): number {
    const view = this.take(4);
    return new DataView(view.buffer, view.byteOffset, 4).getUint32(0, true);
  }

  double(): number {
    const view = this.take(8);
    return new DataView(view.buffer, view.byteOffset, 8).getFloat64(0, true);
  }

  bytes(): Uint8Array {
    return this.take(Number(this.varint()));
  }

  string(): string {
    return Buffer.from(this.bytes()).toString("utf8");
  }

  message(): Reader {
    const length = Number(this.varint());
    if (this.pos + length > this.end) throw new OtlpFormatError("truncated message");
    const reader = new Reader(this.buf, this.pos + length);
    reader.pos = this.pos;
    this.pos += length;
    return reader;
  }

  /** The next field number and wire type, or undefined at the end. */
  tag(): [number, number] | undefined {
    if (this.done()) return undefined;
    const key = Number(this.varint());
    return [key >>> 3, key & 7];
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.take(8);
    else if (wireType === 2) this.take(Number(this.varint()));
    else if (wireType === 5) this.take(4);
    else throw new OtlpFormatError(`unsupported wire type ${wireType}`);
  }

  private take(length: number): Uint8Array {
    if (this.pos + length > this.end) throw new OtlpFormatError("truncated field");
    const slice = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return slice;
  }
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** int64 values beyond 2^53 keep their exact digits as a string. */
function int64(value: bigint): number | string {
  const signed = BigInt.asIntN(64, value);
  return signed >= BigInt(Number.MIN_SAFE_INTEGER) && signed <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(signed) : signed.toString();
}

function anyValue(r: Reader): AttributeValue {
  let value: AttributeValue = null;
  for (let tag = r.tag(); tag; tag = r.tag()) {
    const [field, wire] = tag;
    if (field === 1 && wire === 2) value = r.string();
    else if (field === 2 && wire === 0) value = r.varint() !== 0n;
    else if (field === 3 && wire === 0) value = int64(r.varint());
    else if (field === 4 && wire === 1) value = r.double();
    else if (field === 5 && wire === 2) value = arrayValue(r.message());
    else if (field === 6 && wire === 2) value = Object.fromEntries(keyValueList(r.message()));
    else if (field === 7 && wire === 2) value = Buffer.from(r.bytes()).toString("base64");
    else r.skip(wire);
  }
  return value;
}

function arrayValue(r: Reader): AttributeValue[] {
  const values: AttributeValue[] = [];
  for (let tag = r.tag(); tag; tag = r.tag()) {
    if (tag[0] === 1 && tag[1] === 2) values.push(anyValue(r.message()));
    else r.skip(tag[1]);
  }
  return values;
}

function keyValueList(r: Reader): KeyValues {
  const values: KeyValues = [];
  for (let tag = r.tag(); tag; tag = r.tag()) {
    if (tag[0] === 1 && tag[1] === 2) values.push(keyValue(r.message()));
    else r.skip(tag[1]);
  }
  return values;
}

function keyValue(r: Reader): [string, AttributeValue] {
  let key = "";
  let value: AttributeValue = null;
  for (let tag = r.tag(); tag; tag = r.tag()) {
    if (tag[0] === 1 && tag[1] === 2) key = r.string();
    else if (tag[0] === 2 && tag[1] === 2) value = anyValue(r.message());
    else r.skip(tag[1]);
  }
  return [key, value];
}

function event(r: Reader): OtlpEvent {
  const out: OtlpEvent = { timeUnixNano: 0n, name: "", attributes: [], droppedAttributesCount: 0 };
  for (let tag = r.tag(); tag; tag = r.tag()) {
    const [field, wire] = tag;
    if (field === 1 && wire === 1) out.timeUnixNano = r.fixed64();
    else if (field === 2 && wire === 2) out.name = r.string();
    else if (field === 3 && wire === 2) out.attributes.push(keyValue(r.message()));
    else if (field === 4 && wire === 0) out.droppedAttributesCount = r.uint();
    else r.skip(wire);
  }
  return out;
}

function link(r: Reader): OtlpLink {
  const out: OtlpLink = { traceId: "", spanId: "", traceState: "", attributes: [], droppedAttributesCount: 0, flags: 0 };
  for (let tag = r.tag(); tag; tag = r.tag()) {
    const [field, wire] = tag;
    if (field === 1 && wire === 2) out.traceId = hex(r.bytes());
    else if (field === 2 && wire === 2) out.spanId = hex(r.bytes());
    else if (field === 3 && wire === 2) out.traceState = r.string();
    else if (field === 4 && wire === 2) out.attributes.push(keyValue(r.message()));
    else if (field === 5 && wire === 0) out.droppedAttributesCount = r.uint();
    else if (field === 6 && wire === 5) out.flags = r.fixed32();
    else r.skip(wire);
  }
  return out;
}

function status(r: Reader): OtlpSpan["status"] {
  const out = { code: 0, message: "" };
  for (let tag = r.tag(); tag; tag = r.tag()) {
    if (tag[0] === 2 && tag[1] === 2) out.message = r.string();
    else if (tag[0] === 3 && tag[1] === 0) out.code = r.uint();
    else r.skip(tag[1]);
  }
  return out;
}

function span(r: Reader): OtlpSpan {
  const out: OtlpSpan = {
    traceId: "",
    spanId: "",
    traceState: "",
    parentSpanId: "",
    flags: 0,
    name: "",
    kind: 0,
    startTimeUnixNano: 0n,
    endTimeUnixNano: 0n,
    attributes: [],
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: { code: 0, message: "" },
  };
  for (let tag = r.tag(); tag; tag = r.tag()) {
    const [field, wire] = tag;
    if (field === 1 && wire === 2) out.traceId = hex(r.bytes());
    else if (field === 2 && wire === 2) out.spanId = hex(r.bytes());
    else if (field === 3 && wire === 2) out.traceState = r.string();
    else if (field === 4 && wire === 2) out.parentSpanId = hex(r.bytes());
    else if (field === 5 && wire === 2) out.name = r.string();
    else if (field === 6 && wire === 0) out.kind = r.uint();
    else if (field === 7 && wire === 1) out.startTimeUnixNano = r.fixed64();
    else if (field === 8 && wire === 1) out.endTimeUnixNano = r.fixed64();
    else if (field === 9 && wire === 2) out.attributes.push(keyValue(r.message()));
    else if (field === 10 && wire === 0) out.droppedAttributesCount = r.uint();
    else if (field === 11 && wire === 2) out.events.push(event(r.message()));
    else if (field === 12 && wire === 0) out.droppedEventsCount = r.uint();
    else if (field === 13 && wire === 2) out.links.push(link(r.message()));
    else if (field === 14 && wire === 0) out.droppedLinksCount = r.uint();
    else if (field === 15 && wire === 2) out.status = status(r.message());
    else if (field === 16 && wire === 5) out.flags = r.fixed32();
    else r.skip(wire);
  }
  return out;
}

function scopeSpans(r: Reader, into: OtlpSpan[]): void {
  for (let tag = r.tag(); tag; tag = r.tag()) {
    if (tag[0] === 2 && tag[1] === 2) into.push(span(r.message()));
    else r.skip(tag[1]);
  }
}

function resourceSpans(r: Reader): OtlpResourceSpans {
  const out: OtlpResourceSpans = { resource: { attributes: [], droppedAttributesCount: 0 }, spans: [] };
  for (let tag = r.tag(); tag; tag = r.tag()) {
    const [field, wire] = tag;
    if (field === 1 && wire === 2) {
      const resource = r.message();
      for (let inner = resource.tag(); inner; inner = resource.tag()) {
        if (inner[0] === 1 && inner[1] === 2) out.resource.attributes.push(keyValue(resource.message()));
        else if (inner[0] === 2 && inner[1] === 0) out.resource.droppedAttributesCount = resource.uint();
        else resource.skip(inner[1]);
      }
    } else if (field === 2 && wire === 2) scopeSpans(r.message(), out.spans);
    else r.skip(wire);
  }
  return out;
}

/** Decodes an `ExportTraceServiceRequest`; throws OtlpFormatError on malformed input. */
export function decodeExportTraceRequest(body: Uint8Array): OtlpResourceSpans[] {
  const r = new Reader(body);
  const out: OtlpResourceSpans[] = [];
  for (let tag = r.tag(); tag; tag = r.tag()) {
    if (tag[0] === 1 && tag[1] === 2) out.push(resourceSpans(r.message()));
    else r.skip(tag[1]);
  }
  return out;
}

/** An `ExportTraceServiceResponse`: empty on full success, else `partial_success`. */
export function encodeExportTraceResponse(rejectedSpans: number, errorMessage: string): Buffer {
  if (rejectedSpans === 0) return Buffer.alloc(0);
  const varint = (value: number) => {
    const bytes: number[] = [];
    let rest = value;
    while (rest > 0x7f) {
      bytes.push((rest & 0x7f) | 0x80);
      rest = Math.floor(rest / 128);
    }
    bytes.push(rest);
    return Buffer.from(bytes);
  };
  const message = Buffer.from(errorMessage, "utf8");
  const inner = Buffer.concat([Buffer.from([0x08]), varint(rejectedSpans), Buffer.from([0x12]), varint(message.length), message]);
  return Buffer.concat([Buffer.from([0x0a]), varint(inner.length), inner]);
}
