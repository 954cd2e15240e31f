import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GgmlType, GgufType, type GgufValue, int32s, str, strings, u32 } from "./format.js";
import { GgufFormatError, readGguf, readGgufTensor } from "./reader.js";
import { writeGguf } from "./writer.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-gguf-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("GGUF writer and reader", () => {
  it("round-trips metadata of every type, tensor shapes, aligned offsets and data", () => {
    const metadata = new Map<string, GgufValue>([
      ["general.architecture", str("qwen2")],
      ["u8", { type: GgufType.UINT8, value: 255 }],
      ["i8", { type: GgufType.INT8, value: -128 }],
      ["u16", { type: GgufType.UINT16, value: 65535 }],
      ["i16", { type: GgufType.INT16, value: -32768 }],
      ["u32", u32(4_000_000_000)],
      ["i32", { type: GgufType.INT32, value: -5 }],
      ["f32", { type: GgufType.FLOAT32, value: 0.5 }],
      ["f64", { type: GgufType.FLOAT64, value: Math.PI }],
      ["u64", { type: GgufType.UINT64, value: 2n ** 63n }],
      ["i64", { type: GgufType.INT64, value: -(2n ** 40n) }],
      ["bool", { type: GgufType.BOOL, value: true }],
      ["unicode", str("héllo ✓ 🚀")],
      ["tokens", strings(["a", "Ġb", "", "<|im_end|>"])],
      ["types", int32s([1, 1, 5, 3])],
    ]);
    const matrix = Float32Array.from({ length: 3 * 5 }, (_, i) => i - 7.5);
    const vector = Uint16Array.of(0x3c00, 0xc000, 0x7bff); // f16 1, -2, 65504
    const file = path.join(dir, "round-trip.gguf");
    writeGguf(file, metadata, [
      { name: "odd.weight", shape: [3], type: GgmlType.F16, data: () => new Uint8Array(vector.buffer) },
      { name: "matrix.weight", shape: [3, 5], type: GgmlType.F32, data: () => new Uint8Array(matrix.buffer) },
      { name: "bf16.weight", shape: [2, 2], type: GgmlType.BF16, data: () => new Uint8Array(8).fill(1) },
    ]);

    const read = readGguf(file);
    expect(read.version).toBe(3);
    expect(read.alignment).toBe(32);
    expect([...read.metadata.keys()]).toEqual([...metadata.keys()]);
    for (const [key, value] of metadata) {
      const got = read.metadata.get(key)!;
      expect(got.type).toBe(value.type);
      if (value.type === GgufType.FLOAT32) expect(got.value).toBeCloseTo(value.value as number, 6);
      else expect(got.value).toEqual(value.value);
    }
    expect(read.metadata.get("tokens")).toMatchObject({ itemType: GgufType.STRING });
    expect(read.tensors.map(({ name, shape, type, byteLength }) => ({ name, shape, type, byteLength }))).toEqual([
      { name: "odd.weight", shape: [3], type: GgmlType.F16, byteLength: 6 },
      { name: "matrix.weight", shape: [3, 5], type: GgmlType.F32, byteLength: 60 },
      { name: "bf16.weight", shape: [2, 2], type: GgmlType.BF16, byteLength: 8 },
    ]);
    // Offsets are relative to an aligned data section and aligned themselves (6 bytes pad to 32).
    expect(read.tensors.map((tensor) => tensor.offset)).toEqual([0, 32, 96]);
    expect(read.dataStart % 32).toBe(0);
    expect(read.fileSize).toBe(read.dataStart + 96 + 32);
    expect(new Uint16Array(readGgufTensor(file, read.tensors[0]!).buffer)).toEqual(vector);
    expect(new Float32Array(readGgufTensor(file, read.tensors[1]!).buffer)).toEqual(matrix);

    // The header lists dimensions fastest-varying first: [5, 3] for a 3 × 5 matrix.
    const bytes = fs.readFileSync(file);
    const nameAt = bytes.indexOf("matrix.weight");
    expect(bytes.readUInt32LE(nameAt + 13)).toBe(2);
    expect([bytes.readBigUInt64LE(nameAt + 17), bytes.readBigUInt64LE(nameAt + 25)]).toEqual([5n, 3n]);
  });

  it("honours general.alignment and refuses data of the wrong size", () => {
    const file = path.join(dir, "aligned.gguf");
    writeGguf(
      file,
      new Map([["general.alignment", u32(64)]]),
      [
        { name: "a", shape: [1], type: GgmlType.F32, data: () => new Uint8Array(4) },
        { name: "b", shape: [1], type: GgmlType.F32, data: () => new Uint8Array(4) },
      ],
      64,
    );
    const read = readGguf(file);
    expect(read.alignment).toBe(64);
    expect(read.tensors.map((tensor) => tensor.offset)).toEqual([0, 64]);
    expect(read.dataStart % 64).toBe(0);
    expect(() => writeGguf(path.join(dir, "bad.gguf"), new Map(), [{ name: "a", shape: [2], type: GgmlType.F32, data: () => new Uint8Array(4) }])).toThrow(/tensor a produced 4 bytes, its shape needs 8/);
  });

  it("rejects files that are not GGUF or are cut short", () => {
    const notGguf = path.join(dir, "not.gguf");
    fs.writeFileSync(notGguf, "GGML and more bytes here");
    expect(() => readGguf(notGguf)).toThrow(GgufFormatError);
    expect(() => readGguf(notGguf)).toThrow(/bad magic/);
    const full = path.join(dir, "full.gguf");
    writeGguf(full, new Map([["tokens", strings(["x".repeat(100)])]]), []);
    const truncated = path.join(dir, "truncated.gguf");
    fs.writeFileSync(truncated, fs.readFileSync(full).subarray(0, 60));
    expect(() => readGguf(truncated)).toThrow(/truncated/);
  });
});
