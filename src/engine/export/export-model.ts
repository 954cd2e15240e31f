import fs from "node:fs";
import path from "node:path";
import { readModelConfig } from "../checkpoint/model-config.js";
import { exportGguf } from "../gguf/export.js";
import { type AdapterFilePaths, loadLoraAdapter } from "../lora/files.js";
import { writeMergedModel } from "./merged-model.js";

/** One export of a base model with an optional adapter merged in: a model directory, or one GGUF file. */
export interface ModelExportJob {
  format: "merged" | "gguf";
  baseDir: string;
  /** The adapter to merge; null exports the base weights. */
  adapter: AdapterFilePaths | string | null;
  /** The directory (merged) or file (gguf) to write; must not exist yet. */
  out: string;
  /** The GGUF's `general.name`. */
  name: string;
}

export interface ModelExportResult {
  /** The files written: for merged, names inside `out`; for gguf, just the file's own name. */
  files: string[];
}

/** Runs an export on the calling thread (the server runs it in a worker thread: `exportModelInThread`). */
export function exportModel(job: ModelExportJob): ModelExportResult {
  const config = readModelConfig(job.baseDir);
  const adapter = job.adapter === null ? null : loadLoraAdapter(job.adapter, { config });
  if (job.format === "merged") {
    writeMergedModel(job.baseDir, adapter, job.out);
    return { files: fs.readdirSync(job.out).sort() };
  }
  const mergedDir = `${job.out}.merged`;
  try {
    writeMergedModel(job.baseDir, adapter, mergedDir);
    exportGguf(mergedDir, job.out, { name: job.name });
  } finally {
    fs.rmSync(mergedDir, { recursive: true, force: true });
  }
  return { files: [path.basename(job.out)] };
}
