import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { CheckpointError } from "./errors.js";
import { isObject, readJsonObject } from "./json-file.js";
import { type FloatTensor, SafetensorsReader, type TensorEntry, type TensorToWrite, writeSafetensors } from "./safetensors.js";

export const SINGLE_FILE = "model.safetensors";
export const INDEX_FILE = "model.safetensors.index.json";

/**
 * The weights of a checkpoint directory: `model.safetensors`, or the shards that
 * `model.safetensors.index.json` maps every tensor name to.
 */
export class CheckpointTensors {
  private constructor(
    private readonly readers: SafetensorsReader[],
    private readonly byName: Map<string, SafetensorsReader>,
    private readonly indexFile?: string,
  ) {}

  static open(dir: string): CheckpointTensors {
    const indexPath = path.join(dir, INDEX_FILE);
    if (fs.existsSync(indexPath)) return CheckpointTensors.openSharded(dir, indexPath);
    const single = path.join(dir, SINGLE_FILE);
    if (!fs.existsSync(single)) {
      const hasBin = fs.existsSync(path.join(dir, "pytorch_model.bin")) || fs.existsSync(path.join(dir, "pytorch_model.bin.index.json"));
      throw new CheckpointError(single, undefined, `is missing and there is no ${INDEX_FILE}${hasBin ? " (pytorch_model.bin checkpoints are not supported: convert them to safetensors)" : ""}`);
    }
    const reader = SafetensorsReader.open(single);
    return new CheckpointTensors([reader], new Map(reader.names().map((name) => [name, reader])));
  }

  get files(): string[] {
    return this.readers.map((reader) => reader.file);
  }

  /** The file that lists the tensors: `model.safetensors` or the index; errors about absent tensors name it. */
  get source(): string {
    return this.indexFile ?? this.readers[0]!.file;
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Where a tensor lives and how it is stored; undefined if the checkpoint has no such tensor. */
  entry(name: string): (TensorEntry & { file: string }) | undefined {
    const reader = this.byName.get(name);
    return reader && { ...reader.entry(name), file: reader.file };
  }

  readFloat(name: string): FloatTensor {
    const reader = this.byName.get(name);
    if (!reader) throw new CheckpointError(this.source, name, "is missing");
    return reader.readFloat(name);
  }

  /**
   * A sha256 over every tensor's name, dtype, shape and bytes, in name order: equal digests mean
   * equal weights, however the checkpoint is sharded.
   */
  digest(): string {
    const hash = createHash("sha256");
    for (const name of this.names()) {
      const reader = this.byName.get(name)!;
      const entry = reader.entry(name);
      hash.update(`${name}\n${entry.dtype}\n${entry.shape.join(",")}\n`);
      hash.update(reader.readBytes(name));
    }
    return hash.digest("hex");
  }

  close(): void {
    for (const reader of this.readers) reader.close();
  }

  private static openSharded(dir: string, indexPath: string): CheckpointTensors {
    const index = readJsonObject(indexPath);
    const weightMap = index.weight_map;
    if (!isObject(weightMap)) throw new CheckpointError(indexPath, "weight_map", "is missing or not an object");
    const readers = new Map<string, SafetensorsReader>();
    const byName = new Map<string, SafetensorsReader>();
    try {
      for (const [name, fileName] of Object.entries(weightMap)) {
        if (typeof fileName !== "string" || fileName.includes("/") || fileName.includes("\\")) {
          throw new CheckpointError(indexPath, `weight_map.${name}`, "must name a file of the checkpoint directory");
        }
        let reader = readers.get(fileName);
        if (!reader) {
          reader = SafetensorsReader.open(path.join(dir, fileName));
          readers.set(fileName, reader);
        }
        if (!reader.entries.has(name)) throw new CheckpointError(indexPath, `weight_map.${name}`, `points to ${fileName}, which has no such tensor`);
        byName.set(name, reader);
      }
    } catch (error) {
      for (const reader of readers.values()) reader.close();
      throw error;
    }
    return new CheckpointTensors([...readers.values()], byName, indexPath);
  }
}

/**
 * Writes tensors as `model.safetensors`, or as `shards` files of roughly equal size named like
 * Hugging Face's (`model-00001-of-00002.safetensors`) plus `model.safetensors.index.json`.
 */
export function writeCheckpointTensors(dir: string, tensors: readonly TensorToWrite[], options: { shards?: number } = {}): void {
  const shards = options.shards ?? 1;
  if (!Number.isInteger(shards) || shards < 1) throw new Error(`shards must be a positive integer, got ${shards}`);
  fs.mkdirSync(dir, { recursive: true });
  if (shards === 1) {
    writeSafetensors(path.join(dir, SINGLE_FILE), tensors);
    return;
  }
  const sorted = [...tensors].sort((a, b) => (a.name < b.name ? -1 : 1));
  if (sorted.length < shards) throw new Error(`cannot split ${sorted.length} tensors into ${shards} shards`);
  const totalSize = sorted.reduce((sum, tensor) => sum + tensor.data.byteLength, 0);
  const groups: TensorToWrite[][] = Array.from({ length: shards }, () => []);
  let written = 0;
  let shard = 0;
  for (const [i, tensor] of sorted.entries()) {
    // Fill shards in order up to an equal share of the bytes, leaving a tensor for each later shard.
    const laterShards = shards - shard - 1;
    const full = written >= ((shard + 1) * totalSize) / shards || sorted.length - i <= laterShards;
    if (laterShards > 0 && groups[shard]!.length > 0 && full) shard++;
    groups[shard]!.push(tensor);
    written += tensor.data.byteLength;
  }
  const weightMap: Record<string, string> = {};
  groups.forEach((group, i) => {
    const fileName = `model-${String(i + 1).padStart(5, "0")}-of-${String(shards).padStart(5, "0")}.safetensors`;
    writeSafetensors(path.join(dir, fileName), group);
    for (const tensor of group) weightMap[tensor.name] = fileName;
  });
  const index = { metadata: { total_size: totalSize }, weight_map: weightMap };
  fs.writeFileSync(path.join(dir, INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`);
}
