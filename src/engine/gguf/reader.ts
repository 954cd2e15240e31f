import fs from "node:fs";
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, ggmlTypeSize, type GgufScalar, GgufType, type GgufValue } from "./format.js";

export interface GgufTensorInfo {
  name: string;
  /** Row-major shape (slowest-varying first), as PyTorch would report it. */
  shape: number[];
  type: number;
  /** Offset from the start of the data section, as stored. */
  offset: number;
  /** Absolute position of the data in the file. */
  position: number;
  /** Data size in bytes, when the type is one this code knows (F32, F16, BF16). */
  byteLength: number | undefined;
}

export interface GgufFile {
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  alignment: number;
  /** Where the data section starts. */
  dataStart: number;
  fileSize: number;
}

export class GgufFormatError extends Error {
  constructor(file: string, detail: string) {
    super(`${file}: ${detail}`);
    this.name = "GgufFormatError";
  }
}

/** Reads a GGUF file's header: metadata, tensor infos and layout (not the tensor data). */
export function readGguf(file: string): GgufFile {
  const fd = fs.openSync(file, "r");
  try {
    const input = new ChunkedInput(file, fd);
    if (input.latin1(4) !== GGUF_MAGIC) input.fail("is not a GGUF file (bad magic)");
    const version = input.u32();
    if (version !== 2 && version !== 3) input.fail(`has GGUF version ${version}; this reader knows versions 2 and 3`);
    const tensorCount = input.count();
    const metadataCount = input.count();
    const metadata = new Map<string, GgufValue>();
    for (let i = 0; i < metadataCount; i++) {
      const key = input.string();
      metadata.set(key, readValue(input));
    }
    const alignmentValue = metadata.get("general.alignment");
    const alignment = alignmentValue ? Number(alignmentValue.value) : GGUF_DEFAULT_ALIGNMENT;
    if (!Number.isInteger(alignment) || alignment <= 0 || alignment % 8 !== 0) input.fail(`has an invalid general.alignment ${alignment}`);
    const infos: Omit<GgufTensorInfo, "position">[] = [];
    for (let i = 0; i < tensorCount; i++) {
      const name = input.string();
      const dims = input.u32();
      if (dims > 8) input.fail(`tensor ${name} has ${dims} dimensions`);
      const sizes: number[] = [];
      for (let d = 0; d < dims; d++) sizes.push(input.count());
      const type = input.u32();
      const offset = input.count();
      if (offset % alignment !== 0) input.fail(`tensor ${name} starts at offset ${offset}, not a multiple of the alignment ${alignment}`);
      const itemSize = ggmlTypeSize(type);
      const shape = sizes.reverse();
      infos.push({ name, shape, type, offset, byteLength: itemSize === undefined ? undefined : shape.reduce((a, b) => a * b, 1) * itemSize });
    }
    const dataStart = Math.ceil(input.position / alignment) * alignment;
    const fileSize = fs.fstatSync(fd).size;
    const tensors = infos.map((info) => ({ ...info, position: dataStart + info.offset }));
    for (const tensor of tensors) {
      if (tensor.byteLength !== undefined && tensor.position + tensor.byteLength > fileSize) input.fail(`tensor ${tensor.name} extends past the end of the file`);
    }
    return { version, metadata, tensors, alignment, dataStart, fileSize };
  } finally {
    fs.closeSync(fd);
  }
}

/** One tensor's bytes. */
export function readGgufTensor(file: string, tensor: GgufTensorInfo): Uint8Array {
  if (tensor.byteLength === undefined) throw new GgufFormatError(file, `tensor ${tensor.name} has type ${tensor.type}, which this reader cannot size`);
  const out = new Uint8Array(tensor.byteLength);
  const fd = fs.openSync(file, "r");
  try {
    let done = 0;
    while (done < out.length) {
      const read = fs.readSync(fd, out, done, out.length - done, tensor.position + done);
      if (read === 0) throw new GgufFormatError(file, `tensor ${tensor.name} is truncated`);
      done += read;
    }
  } finally {
    fs.closeSync(fd);
  }
  return out;
}

function readValue(input: ChunkedInput): GgufValue {
  const type = input.u32();
  if (type === GgufType.ARRAY) {
    const itemType = input.u32();
    if (itemType === GgufType.ARRAY || !(itemType in GgufType)) input.fail(`has an array of unsupported item type ${itemType}`);
    const count = input.count();
    const value: GgufScalar[] = new Array(count);
    for (let i = 0; i < count; i++) value[i] = readScalar(input, itemType);
    return { type, itemType: itemType as Exclude<GgufType, GgufType.ARRAY>, value };
  }
  if (!(type in GgufType)) input.fail(`has a metadata value of unknown type ${type}`);
  return { type: type as Exclude<GgufType, GgufType.ARRAY>, value: readScalar(input, type) };
}

function readScalar(input: ChunkedInput, type: number): GgufScalar {
  switch (type) {
    case GgufType.UINT8:
      return input.view(1).getUint8(0);
    case GgufType.INT8:
      return input.view(1).getInt8(0);
    case GgufType.UINT16:
      return input.view(2).getUint16(0, true);
    case GgufType.INT16:
      return input.view(2).getInt16(0, true);
    case GgufType.UINT32:
      return input.u32();
    case GgufType.INT32:
      return input.view(4).getInt32(0, true);
    case GgufType.FLOAT32:
      return input.view(4).getFloat32(0, true);
    case GgufType.FLOAT64:
      return input.view(8).getFloat64(0, true);
    case GgufType.UINT64:
      return input.view(8).getBigUint64(0, true);
    case GgufType.INT64:
      return input.view(8).getBigInt64(0, true);
    case GgufType.BOOL:
      return input.view(1).getUint8(0) !== 0;
    case GgufType.STRING:
      return input.string();
    default:
      return input.fail(`has a value of unknown type ${type}`);
  }
}

/** Sequential reads from a file descriptor through a buffer refilled on demand (headers can be megabytes). */
class ChunkedInput {
  position = 0;
  private buffer = Buffer.alloc(0);
  private bufferStart = 0;

  constructor(
    private readonly file: string,
    private readonly fd: number,
  ) {}

  fail(detail: string): never {
    throw new GgufFormatError(this.file, detail);
  }

  view(size: number): DataView {
    const bytes = this.take(size);
    return new DataView(bytes.buffer, bytes.byteOffset, size);
  }

  u32(): number {
    return this.view(4).getUint32(0, true);
  }

  /** A u64 that must fit a JavaScript number (counts, sizes, offsets). */
  count(): number {
    const value = this.view(8).getBigUint64(0, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`has an impossible size or count ${value}`);
    return Number(value);
  }

  latin1(size: number): string {
    return this.take(size).toString("latin1");
  }

  string(): string {
    const length = this.count();
    if (length > 1 << 30) this.fail(`has a string of ${length} bytes`);
    return this.take(length).toString("utf8");
  }

  private take(size: number): Buffer {
    const start = this.position - this.bufferStart;
    if (start + size > this.buffer.length) this.refill(size);
    const begin = this.position - this.bufferStart;
    this.position += size;
    return this.buffer.subarray(begin, begin + size);
  }

  private refill(size: number): void {
    const chunk = Buffer.alloc(Math.max(size, 1 << 20));
    const read = fs.readSync(this.fd, chunk, 0, chunk.length, this.position);
    if (read < size) this.fail("is truncated: the file ends inside its header");
    this.buffer = chunk.subarray(0, read);
    this.bufferStart = this.position;
  }
}
