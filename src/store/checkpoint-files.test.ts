import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../testing/stores.js";
import { LocalBlobStore } from "./blobs.js";
import { CheckpointFilesError, checkpointDir, materializeCheckpoint } from "./checkpoint-files.js";

describe("checkpoint files", () => {
  let dataDir: string;
  let blobs: LocalBlobStore;
  beforeEach(() => {
    dataDir = makeTempDir();
    blobs = new LocalBlobStore(dataDir);
  });
  afterEach(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function storedFiles() {
    const config = await blobs.put(Buffer.from('{"r": 8}'));
    const weights = await blobs.put(Buffer.from([1, 2, 3, 4]));
    return JSON.stringify({ "adapter_config.json": config, "adapter_model.safetensors": weights });
  }

  it("writes a checkpoint's files into its own directory once", async () => {
    const files = await storedFiles();
    const dir = await materializeCheckpoint(blobs, dataDir, { id: "ckpt-1", files });
    expect(dir).toBe(path.join(dataDir, "checkpoints", "ckpt-1"));
    expect(fs.readFileSync(path.join(dir!, "adapter_config.json"), "utf8")).toBe('{"r": 8}');
    expect([...fs.readFileSync(path.join(dir!, "adapter_model.safetensors"))]).toEqual([1, 2, 3, 4]);
    const mtime = fs.statSync(path.join(dir!, "adapter_config.json")).mtimeMs;
    expect(await materializeCheckpoint(blobs, dataDir, { id: "ckpt-1", files })).toBe(dir);
    expect(fs.statSync(path.join(dir!, "adapter_config.json")).mtimeMs).toBe(mtime);
  });

  it("gives concurrent callers the same complete directory and leaves no staging behind", async () => {
    const files = await storedFiles();
    const dirs = await Promise.all(Array.from({ length: 6 }, () => materializeCheckpoint(blobs, dataDir, { id: "ckpt-2", files })));
    expect(new Set(dirs).size).toBe(1);
    expect(fs.readdirSync(path.join(dataDir, "checkpoints"))).toEqual(["ckpt-2"]);
    expect(fs.readdirSync(dirs[0]!).sort()).toEqual(["adapter_config.json", "adapter_model.safetensors"]);
  });

  it("returns null for a checkpoint of base weights", async () => {
    expect(await materializeCheckpoint(blobs, dataDir, { id: "ckpt-3", files: null })).toBeNull();
  });

  it("refuses missing blobs and unsafe names without leaving a directory", async () => {
    const missing = JSON.stringify({ "adapter_model.safetensors": "a".repeat(64) });
    await expect(materializeCheckpoint(blobs, dataDir, { id: "ckpt-4", files: missing })).rejects.toThrow(CheckpointFilesError);
    expect(fs.existsSync(checkpointDir(dataDir, "ckpt-4"))).toBe(false);
    expect(fs.readdirSync(path.join(dataDir, "checkpoints"))).toEqual([]);
    const digest = await blobs.put(Buffer.from("x"));
    await expect(materializeCheckpoint(blobs, dataDir, { id: "ckpt-5", files: JSON.stringify({ "../escape": digest }) })).rejects.toThrow(/invalid file entry/);
    await expect(materializeCheckpoint(blobs, dataDir, { id: "../x", files: JSON.stringify({}) })).rejects.toThrow(/invalid checkpoint id/);
  });
});
