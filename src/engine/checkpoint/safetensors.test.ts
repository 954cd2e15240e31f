import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectCheckpointError } from "../../testing/checkpoint-errors.js";
import { makeTempDir } from "../../testing/stores.js";
import { encodeFloats } from "./dtype.js";
import { encodeSafetensors, SafetensorsReader, writeSafetensors } from "./safetensors.js";

const dir = makeTempDir("flywheel-safetensors-");
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function fileWithHeader(name: string, header: unknown, data = new Uint8Array(0)): string {
  const json = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(json.length));
  const file = path.join(dir, name);
  fs.writeFileSync(file, Buffer.concat([prefix, json, data]));
  return file;
}

describe("safetensors", () => {
  it("encodes in memory exactly the bytes it writes to a file", () => {
    const tensors = [
      { name: "z", dtype: "BF16" as const, shape: [2], data: encodeFloats("BF16", Float32Array.of(0.5, -2)) },
      { name: "y", dtype: "F32" as const, shape: [1, 3], data: encodeFloats("F32", Float32Array.of(1, 2, 3)) },
    ];
    const file = path.join(dir, "memory.safetensors");
    writeSafetensors(file, tensors, { format: "pt", note: "x" });
    expect(Buffer.from(encodeSafetensors(tensors, { format: "pt", note: "x" })).equals(fs.readFileSync(file))).toBe(true);
  });

  it("writes the reference layout and reads it back", () => {
    const file = path.join(dir, "a.safetensors");
    writeSafetensors(file, [
      { name: "b", dtype: "F16", shape: [3], data: encodeFloats("F16", Float32Array.of(1, 2, 3)) },
      { name: "a", dtype: "F32", shape: [2, 2], data: encodeFloats("F32", Float32Array.of(1, 2, 3, 4)) },
    ]);
    const bytes = fs.readFileSync(file);
    const headerLength = Number(bytes.readBigUInt64LE(0));
    expect((8 + headerLength) % 8).toBe(0);
    const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString());
    expect(header.__metadata__).toEqual({ format: "pt" });
    expect(header.a).toEqual({ dtype: "F32", shape: [2, 2], data_offsets: [0, 16] });
    expect(header.b).toEqual({ dtype: "F16", shape: [3], data_offsets: [16, 22] });

    const reader = SafetensorsReader.open(file);
    try {
      expect(reader.names().sort()).toEqual(["a", "b"]);
      const a = reader.readFloat("a");
      expect(a.dtype).toBe("F32");
      expect(a.shape).toEqual([2, 2]);
      expect([...new Float32Array(a.data.buffer)]).toEqual([1, 2, 3, 4]);
      expect([...new Uint16Array(reader.readFloat("b").data.buffer)]).toEqual([0x3c00, 0x4000, 0x4200]);
      expectCheckpointError(() => reader.readFloat("c"), file, "c", /is not a tensor of this file/);
    } finally {
      reader.close();
    }
  });

  it("names the file and tensor for every malformed header", () => {
    expectCheckpointError(() => SafetensorsReader.open(path.join(dir, "absent.safetensors")), path.join(dir, "absent.safetensors"), undefined, /is missing/);
    const short = path.join(dir, "short.safetensors");
    fs.writeFileSync(short, "abc");
    expectCheckpointError(() => SafetensorsReader.open(short), short, undefined, /not a safetensors file/);
    const huge = path.join(dir, "huge.safetensors");
    fs.writeFileSync(huge, Buffer.from([0xff, 0xff, 0, 0, 0, 0, 0, 0, 123]));
    expectCheckpointError(() => SafetensorsReader.open(huge), huge, undefined, /header length/);
    const notJson = fileWithHeader("json.safetensors", "x");
    fs.writeFileSync(notJson, Buffer.concat([Buffer.from([3, 0, 0, 0, 0, 0, 0, 0]), Buffer.from("{x}")]));
    expectCheckpointError(() => SafetensorsReader.open(notJson), notJson, undefined, /not valid JSON/);
    const badDtype = fileWithHeader("dtype.safetensors", { w: { dtype: "Q4", shape: [1], data_offsets: [0, 1] } }, new Uint8Array(1));
    expectCheckpointError(() => SafetensorsReader.open(badDtype), badDtype, "w", /unknown dtype "Q4"/);
    const mismatch = fileWithHeader("mismatch.safetensors", { w: { dtype: "F32", shape: [2], data_offsets: [0, 4] } }, new Uint8Array(8));
    expectCheckpointError(() => SafetensorsReader.open(mismatch), mismatch, "w", /do not match its shape \[2\]/);
    const beyond = fileWithHeader("beyond.safetensors", { w: { dtype: "F32", shape: [2], data_offsets: [0, 8] } }, new Uint8Array(4));
    expectCheckpointError(() => SafetensorsReader.open(beyond), beyond, "w", /beyond the end of the file/);
  });

  it("reads other dtypes' headers but refuses them as float weights", () => {
    const file = fileWithHeader("ints.safetensors", { ids: { dtype: "I64", shape: [2], data_offsets: [0, 16] } }, new Uint8Array(16));
    const reader = SafetensorsReader.open(file);
    try {
      expect(reader.readBytes("ids")).toHaveLength(16);
      expectCheckpointError(() => reader.readFloat("ids"), file, "ids", /has dtype I64; supported: F32, F16, BF16/);
    } finally {
      reader.close();
    }
  });
});
