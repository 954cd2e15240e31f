import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectCheckpointError } from "../../testing/checkpoint-errors.js";
import { makeTempDir } from "../../testing/stores.js";
import { decodeFloats, encodeFloats } from "./dtype.js";
import { type TensorToWrite, writeSafetensors } from "./safetensors.js";
import { CheckpointTensors, INDEX_FILE, writeCheckpointTensors } from "./tensors.js";

const root = makeTempDir("flywheel-tensors-");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const tensors: TensorToWrite[] = ["a", "b", "c", "d", "e"].map((name, i) => ({
  name: `model.${name}.weight`,
  dtype: "F32",
  shape: [2, i + 1],
  data: encodeFloats(
    "F32",
    Float32Array.from({ length: 2 * (i + 1) }, (_, j) => i * 10 + j),
  ),
}));

describe("checkpoint tensors", () => {
  it("reads the same tensors and digest from one file and from shards", () => {
    writeCheckpointTensors(path.join(root, "single"), tensors);
    writeCheckpointTensors(path.join(root, "sharded"), tensors, { shards: 3 });
    const files = fs.readdirSync(path.join(root, "sharded")).sort();
    expect(files).toEqual(["model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors", INDEX_FILE]);
    const index = JSON.parse(fs.readFileSync(path.join(root, "sharded", INDEX_FILE), "utf8"));
    expect(index.metadata.total_size).toBe(tensors.reduce((sum, t) => sum + t.data.byteLength, 0));
    expect(Object.keys(index.weight_map).sort()).toEqual(tensors.map((t) => t.name));

    const single = CheckpointTensors.open(path.join(root, "single"));
    const sharded = CheckpointTensors.open(path.join(root, "sharded"));
    try {
      expect(sharded.files).toHaveLength(3);
      expect(sharded.source).toBe(path.join(root, "sharded", INDEX_FILE));
      expect(single.source).toBe(path.join(root, "single", "model.safetensors"));
      expect(sharded.names()).toEqual(single.names());
      for (const name of single.names()) {
        const a = single.readFloat(name);
        const b = sharded.readFloat(name);
        expect(b.shape).toEqual(a.shape);
        expect([...decodeFloats(b.dtype, b.data)]).toEqual([...decodeFloats(a.dtype, a.data)]);
      }
      expect(sharded.digest()).toBe(single.digest());
      expect(single.entry("model.c.weight")).toMatchObject({ dtype: "F32", shape: [2, 3] });
      expect(single.entry("absent")).toBeUndefined();
      expectCheckpointError(() => sharded.readFloat("absent"), sharded.source, "absent", /is missing/);
    } finally {
      single.close();
      sharded.close();
    }
  });

  it("changes the digest when any value, name or dtype changes", () => {
    const digestOf = (list: TensorToWrite[], name: string) => {
      writeCheckpointTensors(path.join(root, name), list);
      const checkpoint = CheckpointTensors.open(path.join(root, name));
      try {
        return checkpoint.digest();
      } finally {
        checkpoint.close();
      }
    };
    const original = digestOf(tensors, "d0");
    const changedValue = tensors.map((t, i) => (i === 2 ? { ...t, data: encodeFloats("F32", Float32Array.of(0, 1, 2, 3, 4, 5.5)) } : t));
    const renamed = tensors.map((t, i) => (i === 0 ? { ...t, name: "model.z.weight" } : t));
    const halved = tensors.map((t) => ({ ...t, dtype: "F16" as const, data: encodeFloats("F16", decodeFloats("F32", t.data)) }));
    const digests = [original, digestOf(changedValue, "d1"), digestOf(renamed, "d2"), digestOf(halved, "d3")];
    expect(new Set(digests).size).toBe(4);
  });

  it("names the missing weights file or the index entry at fault", () => {
    const empty = path.join(root, "empty");
    fs.mkdirSync(empty);
    expectCheckpointError(() => CheckpointTensors.open(empty), path.join(empty, "model.safetensors"), undefined, /is missing and there is no model.safetensors.index.json/);
    fs.writeFileSync(path.join(empty, "pytorch_model.bin"), "");
    expectCheckpointError(() => CheckpointTensors.open(empty), path.join(empty, "model.safetensors"), undefined, /pytorch_model.bin checkpoints are not supported/);

    const broken = path.join(root, "broken");
    fs.mkdirSync(broken);
    const indexFile = path.join(broken, INDEX_FILE);
    fs.writeFileSync(indexFile, JSON.stringify({ metadata: {} }));
    expectCheckpointError(() => CheckpointTensors.open(broken), indexFile, "weight_map", /is missing/);
    fs.writeFileSync(indexFile, JSON.stringify({ weight_map: { w: "../escape.safetensors" } }));
    expectCheckpointError(() => CheckpointTensors.open(broken), indexFile, "weight_map.w", /must name a file of the checkpoint directory/);
    fs.writeFileSync(indexFile, JSON.stringify({ weight_map: { w: "gone.safetensors" } }));
    expectCheckpointError(() => CheckpointTensors.open(broken), path.join(broken, "gone.safetensors"), undefined, /is missing/);
    writeSafetensors(path.join(broken, "part.safetensors"), [tensors[0]!]);
    fs.writeFileSync(indexFile, JSON.stringify({ weight_map: { "model.b.weight": "part.safetensors" } }));
    expectCheckpointError(() => CheckpointTensors.open(broken), indexFile, "weight_map.model.b.weight", /points to part.safetensors, which has no such tensor/);
  });

  it("refuses shard counts it cannot honour", () => {
    expect(() => writeCheckpointTensors(path.join(root, "x"), tensors, { shards: 0 })).toThrow(/positive integer/);
    expect(() => writeCheckpointTensors(path.join(root, "x"), tensors, { shards: 6 })).toThrow(/cannot split 5 tensors into 6 shards/);
  });
});
