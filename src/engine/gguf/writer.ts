import fs from "node:fs";
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GGUF_VERSION, type GgmlType, ggmlTypeSize, type GgufScalar, GgufType, type GgufValue } from "./format.js";

/** A tensor to write: its shape as PyTorch gives it (slowest-varying first) and its bytes on demand. */
export interface GgufTensorToWrite {
  name: string;
  shape: number[];
  type: GgmlType;
  /** Produces exactly the tensor's bytes; called once, in order, so big models stream through. */
  data: () => Uint8Array;
}

/**
 * Writes a GGUF v3 file: the header (metadata and tensor infos, with every offset computed from the
 * shapes up front), then each tensor's data at its aligned offset. Only one tensor's bytes are in
 * memory at a time.
 */
export function writeGguf(file: string, metadata: ReadonlyMap<string, GgufValue>, tensors: readonly GgufTensorToWrite[], alignment = GGUF_DEFAULT_ALIGNMENT): void {
  const header = new ByteWriter();
  header.bytes(Buffer.from(GGUF_MAGIC, "latin1"));
  header.u32(GGUF_VERSION);
  header.u64(BigInt(tensors.length));
  header.u64(BigInt(metadata.size));
  for (const [key, value] of metadata) {
    header.string(key);
    writeValue(header, value);
  }
  const offsets: number[] = [];
  let offset = 0;
  for (const tensor of tensors) {
    const itemSize = ggmlTypeSize(tensor.type);
    if (itemSize === undefined) throw new Error(`GGUF: tensor ${tensor.name} has an unsupported type ${tensor.type}`);
    header.string(tensor.name);
    header.u32(tensor.shape.length);
    // GGUF lists dimensions fastest-varying first: the reverse of a row-major shape.
    for (const size of [...tensor.shape].reverse()) header.u64(BigInt(size));
    header.u32(tensor.type);
    header.u64(BigInt(offset));
    offsets.push(offset);
    offset = alignUp(offset + tensor.shape.reduce((product, size) => product * size, 1) * itemSize, alignment);
  }
  const headerBytes = header.finish();
  const dataStart = alignUp(headerBytes.length, alignment);

  const fd = fs.openSync(file, "w");
  try {
    writeAll(fd, headerBytes, 0);
    writeAll(fd, new Uint8Array(dataStart - headerBytes.length), headerBytes.length);
    tensors.forEach((tensor, i) => {
      const bytes = tensor.data();
      const expected = tensor.shape.reduce((product, size) => product * size, 1) * ggmlTypeSize(tensor.type)!;
      if (bytes.byteLength !== expected) throw new Error(`GGUF: tensor ${tensor.name} produced ${bytes.byteLength} bytes, its shape needs ${expected}`);
      const at = dataStart + offsets[i]!;
      writeAll(fd, bytes, at);
      const padded = alignUp(bytes.byteLength, alignment);
      if (padded > bytes.byteLength) writeAll(fd, new Uint8Array(padded - bytes.byteLength), at + bytes.byteLength);
    });
  } finally {
    fs.closeSync(fd);
  }
}

export function alignUp(value: number, alignment: number): number {
  return Math.ceil(value / alignment) * alignment;
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  let done = 0;
  while (done < bytes.byteLength) done += fs.writeSync(fd, bytes, done, bytes.byteLength - done, position + done);
}

function writeValue(out: ByteWriter, value: GgufValue): void {
  out.u32(value.type);
  if (value.type === GgufType.ARRAY) {
    out.u32(value.itemType);
    out.u64(BigInt(value.value.length));
    for (const item of value.value) writeScalar(out, value.itemType, item);
    return;
  }
  writeScalar(out, value.type, value.value);
}

function writeScalar(out: ByteWriter, type: GgufType, value: GgufScalar): void {
  const number = () => {
    if (typeof value !== "number") throw new TypeError(`GGUF: expected a number for type ${GgufType[type]}, got ${typeof value}`);
    return value;
  };
  switch (type) {
    case GgufType.UINT8:
      return out.fixed(1, (view) => view.setUint8(0, number()));
    case GgufType.INT8:
      return out.fixed(1, (view) => view.setInt8(0, number()));
    case GgufType.UINT16:
      return out.fixed(2, (view) => view.setUint16(0, number(), true));
    case GgufType.INT16:
      return out.fixed(2, (view) => view.setInt16(0, number(), true));
    case GgufType.UINT32:
      return out.u32(number());
    case GgufType.INT32:
      return out.fixed(4, (view) => view.setInt32(0, number(), true));
    case GgufType.FLOAT32:
      return out.fixed(4, (view) => view.setFloat32(0, number(), true));
    case GgufType.FLOAT64:
      return out.fixed(8, (view) => view.setFloat64(0, number(), true));
    case GgufType.UINT64:
      return out.u64(BigInt(value as number | bigint));
    case GgufType.INT64:
      return out.fixed(8, (view) => view.setBigInt64(0, BigInt(value as number | bigint), true));
    case GgufType.BOOL:
      return out.fixed(1, (view) => view.setUint8(0, value ? 1 : 0));
    case GgufType.STRING:
      if (typeof value !== "string") throw new TypeError(`GGUF: expected a string, got ${typeof value}`);
      return out.string(value);
    default:
      throw new TypeError(`GGUF: cannot write a value of type ${type}`);
  }
}

/** A growable little-endian byte buffer for the header. */
class ByteWriter {
  private buffer = new Uint8Array(1 << 16);
  private view = new DataView(this.buffer.buffer);
  private length = 0;

  fixed(size: number, write: (view: DataView) => void): void {
    this.reserve(size);
    write(new DataView(this.buffer.buffer, this.length, size));
    this.length += size;
  }

  u32(value: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, value, true);
    this.length += 4;
  }

  u64(value: bigint): void {
    this.reserve(8);
    this.view.setBigUint64(this.length, value, true);
    this.length += 8;
  }

  string(value: string): void {
    const bytes = Buffer.from(value, "utf8");
    this.u64(BigInt(bytes.length));
    this.bytes(bytes);
  }

  bytes(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  finish(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  private reserve(size: number): void {
    if (this.length + size <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + size));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
    this.view = new DataView(grown.buffer);
  }
}
