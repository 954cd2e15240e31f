import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { BlobStore } from "./blobs.js";
import { decodeJson } from "./json.js";

/**
 * A checkpoint's files (a PEFT adapter) live content-addressed in the blob store; the engine loads
 * adapters from a directory. This writes a checkpoint's files once into
 * `<dataDir>/checkpoints/<checkpoint id>/`, atomically (a temporary directory renamed into place),
 * so concurrent requests and a crash mid-write never expose a partial adapter. Training reuses it
 * to load a checkpoint it resumes from.
 */

export interface CheckpointFiles {
  id: string;
  /** JSON object of file name → blob digest, as stored in `checkpoints.files`; null for base weights. */
  files: string | null;
}

/** Thrown when a checkpoint's stored files cannot be turned into a directory (missing blob, bad name). */
export class CheckpointFilesError extends Error {}

const SAFE_FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Where a checkpoint's directory lives (whether or not it was written yet). */
export function checkpointDir(dataDir: string, checkpointId: string): string {
  if (!SAFE_FILE_NAME.test(checkpointId)) throw new CheckpointFilesError(`invalid checkpoint id '${checkpointId}'`);
  return path.join(dataDir, "checkpoints", checkpointId);
}

const inFlight = new Map<string, Promise<string>>();

/**
 * The directory holding the checkpoint's files, written on first use; null when the checkpoint has
 * no files (it serves the base weights).
 */
export async function materializeCheckpoint(blobs: BlobStore, dataDir: string, checkpoint: CheckpointFiles): Promise<string | null> {
  if (checkpoint.files === null) return null;
  const target = checkpointDir(dataDir, checkpoint.id);
  if (fs.existsSync(target)) return target;
  const pending = inFlight.get(target);
  if (pending) return pending;
  const work = writeCheckpointDir(blobs, target, decodeFiles(checkpoint)).finally(() => inFlight.delete(target));
  inFlight.set(target, work);
  return work;
}

function decodeFiles(checkpoint: CheckpointFiles): Record<string, string> {
  const files = decodeJson<unknown>(checkpoint.files);
  if (typeof files !== "object" || files === null || Array.isArray(files)) {
    throw new CheckpointFilesError(`checkpoint ${checkpoint.id} has malformed files`);
  }
  for (const [name, digest] of Object.entries(files)) {
    if (!SAFE_FILE_NAME.test(name) || typeof digest !== "string") {
      throw new CheckpointFilesError(`checkpoint ${checkpoint.id} has an invalid file entry '${name}'`);
    }
  }
  return files as Record<string, string>;
}

async function writeCheckpointDir(blobs: BlobStore, target: string, files: Record<string, string>): Promise<string> {
  const parent = path.dirname(target);
  const staging = path.join(parent, `.tmp-${randomUUID()}`);
  await fs.promises.mkdir(staging, { recursive: true });
  try {
    for (const [name, digest] of Object.entries(files)) {
      if (!(await blobs.has(digest))) throw new CheckpointFilesError(`blob ${digest} of file '${name}' is missing from the blob store`);
      await writeSynced(path.join(staging, name), await blobs.get(digest));
    }
    await fs.promises.rename(staging, target);
  } catch (error) {
    await fs.promises.rm(staging, { recursive: true, force: true });
    // Another process finished the same directory first: theirs is complete, use it.
    if (fs.existsSync(target) && !(error instanceof CheckpointFilesError)) return target;
    throw error;
  }
  return target;
}

/** Writes and fsyncs, so a directory renamed into place never holds files cut short by a crash. */
async function writeSynced(file: string, bytes: Uint8Array): Promise<void> {
  const handle = await fs.promises.open(file, "w");
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
