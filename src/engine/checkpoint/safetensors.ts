import fs from "node:fs";
import os from "node:os";
import type { FloatDType } from "./dtype.js";
import { CheckpointError } from "./errors.js";
import { describe, isObject } from "./json-file.js";

/**
 * The safetensors format: an 8-byte little-endian header length N, N bytes of JSON
 * (`{"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`, offsets
 * relative to the end of the header), then the raw little-endian tensor bytes.
 */

const ELEMENT_BYTES: Record<string, number> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E4M3: 1,
  F8_E5M2: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  I64: 8,
  U64: 8,
  F64: 8,
};
const FLOAT_DTYPES: readonly string[] = ["F32", "F16", "BF16"];
const MAX_HEADER_BYTES = 100 * 1024 * 1024;
const READ_CHUNK = 1 << 30;

export interface TensorEntry {
  name: string;
  dtype: string;
  shape: number[];
  /** Absolute byte range in the file. */
  begin: number;
  end: number;
}

/** A floating-point tensor as stored: raw little-endian bytes of its dtype. */
export interface FloatTensor {
  dtype: FloatDType;
  shape: number[];
  data: Uint8Array;
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((product, size) => product * size, 1);
}

export class SafetensorsReader {
  private constructor(
    readonly file: string,
    private readonly fd: number,
    readonly entries: Map<string, TensorEntry>,
    readonly metadata: Record<string, string>,
  ) {}

  static open(file: string): SafetensorsReader {
    if (os.endianness() !== "LE") throw new CheckpointError(file, undefined, "cannot be read on a big-endian machine");
    let fd: number;
    try {
      fd = fs.openSync(file, "r");
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
      throw new CheckpointError(file, undefined, missing ? "is missing" : `cannot be read: ${(error as Error).message}`);
    }
    try {
      const { entries, metadata } = readHeader(file, fd);
      return new SafetensorsReader(file, fd, entries, metadata);
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  entry(name: string): TensorEntry {
    const entry = this.entries.get(name);
    if (!entry) throw new CheckpointError(this.file, name, "is not a tensor of this file");
    return entry;
  }

  /** The tensor's bytes, in a fresh (aligned) buffer. */
  readBytes(name: string): Uint8Array {
    const { begin, end } = this.entry(name);
    const out = new Uint8Array(end - begin);
    let done = 0;
    while (done < out.length) {
      const read = fs.readSync(this.fd, out, done, Math.min(READ_CHUNK, out.length - done), begin + done);
      if (read === 0) throw new CheckpointError(this.file, name, "is truncated: the file ends inside its data");
      done += read;
    }
    return out;
  }

  readFloat(name: string): FloatTensor {
    const entry = this.entry(name);
    if (!FLOAT_DTYPES.includes(entry.dtype)) {
      throw new CheckpointError(this.file, name, `has dtype ${entry.dtype}; supported: F32, F16, BF16`);
    }
    return { dtype: entry.dtype as FloatDType, shape: entry.shape, data: this.readBytes(name) };
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

function readHeader(file: string, fd: number): { entries: Map<string, TensorEntry>; metadata: Record<string, string> } {
  const size = fs.fstatSync(fd).size;
  const fail = (detail: string, field?: string): never => {
    throw new CheckpointError(file, field, detail);
  };
  if (size < 8) fail("is not a safetensors file (shorter than its 8-byte header length)");
  const prefix = Buffer.alloc(8);
  fs.readSync(fd, prefix, 0, 8, 0);
  const headerLength = Number(prefix.readBigUInt64LE(0));
  if (headerLength > MAX_HEADER_BYTES || 8 + headerLength > size) fail(`is not a safetensors file (header length ${headerLength} does not fit a ${size}-byte file)`);
  const headerBytes = Buffer.alloc(headerLength);
  fs.readSync(fd, headerBytes, 0, headerLength, 8);
  let header: unknown;
  try {
    header = JSON.parse(headerBytes.toString("utf8"));
  } catch (error) {
    fail(`has a header that is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(header)) return fail("has a header that is not a JSON object");

  const dataStart = 8 + headerLength;
  const entries = new Map<string, TensorEntry>();
  let metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(header)) {
    if (name === "__metadata__") {
      if (!isObject(value)) fail("must be an object of strings", "__metadata__");
      metadata = value as Record<string, string>;
      continue;
    }
    if (!isObject(value)) return fail(`must describe a tensor, got ${describe(value)}`, name);
    const { dtype, shape, data_offsets: offsets } = value;
    if (typeof dtype !== "string" || !(dtype in ELEMENT_BYTES)) fail(`has unknown dtype ${describe(dtype)}`, name);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) fail("has an invalid shape", name);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isInteger(o) && o >= 0)) fail("has invalid data_offsets", name);
    const [begin, end] = offsets as [number, number];
    const expected = elementCount(shape as number[]) * ELEMENT_BYTES[dtype as string]!;
    if (end - begin !== expected) fail(`has data_offsets [${begin}, ${end}] that do not match its shape [${(shape as number[]).join(", ")}] of ${dtype} (${expected} bytes)`, name);
    if (dataStart + end > size) fail(`has data_offsets [${begin}, ${end}] beyond the end of the file`, name);
    entries.set(name, { name, dtype: dtype as string, shape: shape as number[], begin: dataStart + begin, end: dataStart + end });
  }
  return { entries, metadata };
}

export interface TensorToWrite {
  name: string;
  dtype: FloatDType;
  shape: number[];
  data: Uint8Array;
}

/**
 * Writes a safetensors file. Tensors are laid out in name order; the header is padded with spaces
 * to a multiple of 8 bytes so the data section starts 8-byte aligned, as the reference writer does.
 */
export function writeSafetensors(file: string, tensors: readonly TensorToWrite[], metadata: Record<string, string> = { format: "pt" }): void {
  const { prefix, sorted } = layOut(tensors, metadata);
  const fd = fs.openSync(file, "w");
  try {
    fs.writeSync(fd, prefix);
    for (const tensor of sorted) fs.writeSync(fd, tensor.data);
  } finally {
    fs.closeSync(fd);
  }
}

/** The bytes `writeSafetensors` would write, in memory (for small files such as adapters). */
export function encodeSafetensors(tensors: readonly TensorToWrite[], metadata: Record<string, string> = { format: "pt" }): Uint8Array {
  const { prefix, sorted } = layOut(tensors, metadata);
  return Buffer.concat([prefix, ...sorted.map((tensor) => tensor.data)]);
}

/** A tensor whose bytes are produced only when it is written, so a big file streams through memory. */
export interface LazyTensorToWrite {
  name: string;
  dtype: FloatDType;
  shape: number[];
  data: () => Uint8Array;
}

/** Writes a safetensors file calling each tensor's `data` once, in name order; only one tensor's bytes are held at a time. */
export function writeSafetensorsLazily(file: string, tensors: readonly LazyTensorToWrite[], metadata: Record<string, string> = { format: "pt" }): void {
  const { prefix, sorted } = layOut(tensors, metadata);
  const fd = fs.openSync(file, "w");
  try {
    fs.writeSync(fd, prefix);
    for (const tensor of sorted) {
      const bytes = tensor.data();
      if (bytes.byteLength !== tensorBytes(tensor)) throw new Error(`tensor ${tensor.name}: ${bytes.byteLength} bytes do not match shape [${tensor.shape.join(", ")}] of ${tensor.dtype}`);
      let done = 0;
      while (done < bytes.byteLength) done += fs.writeSync(fd, bytes, done, bytes.byteLength - done);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** How many bytes a tensor of this dtype and shape takes. */
export function tensorBytes(tensor: { dtype: FloatDType; shape: readonly number[] }): number {
  return elementCount(tensor.shape) * (tensor.dtype === "F32" ? 4 : 2);
}

/** The tensors in name order and the file's first bytes: the 8-byte header length and the padded header. */
function layOut<T extends { name: string; dtype: FloatDType; shape: number[]; data: Uint8Array | (() => Uint8Array) }>(tensors: readonly T[], metadata: Record<string, string>): { prefix: Buffer; sorted: T[] } {
  const sorted = [...tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const tensor of sorted) {
    const expected = tensorBytes(tensor);
    if (typeof tensor.data !== "function" && tensor.data.byteLength !== expected) throw new Error(`tensor ${tensor.name}: ${tensor.data.byteLength} bytes do not match shape [${tensor.shape.join(", ")}] of ${tensor.dtype}`);
    header[tensor.name] = { dtype: tensor.dtype, shape: tensor.shape, data_offsets: [offset, offset + expected] };
    offset += expected;
  }
  let headerText = JSON.stringify(header);
  headerText += " ".repeat((8 - (Buffer.byteLength(headerText) % 8)) % 8);
  const headerBytes = Buffer.from(headerText, "utf8");
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerBytes.length));
  return { prefix: Buffer.concat([length, headerBytes]), sorted };
}
