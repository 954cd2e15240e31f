import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import type { Architecture } from "../engine/checkpoint/model-config.js";
import { makeTinyModel, type TinyModel, type TinyModelOptions } from "../engine/fixtures/tiny-model.js";
import { type LoadedModel, loadModel } from "../engine/model/load.js";
import { type KernelBackend, kernelsForTests } from "./kernel-backends.js";

export type TinyModelVariant = Omit<TinyModelOptions, "architecture">;

const made = new Map<string, TinyModel>();
const loaded = new Map<string, LoadedModel>();
let root: string | undefined;

// Test files import this at collection time, so the hook removes the fixtures after each file.
if (process.env.VITEST) {
  afterAll(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
    root = undefined;
    made.clear();
    loaded.clear();
  });
}

function fixtureRoot(): string {
  root ??= fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-models-"));
  return root;
}

/**
 * A fixture model directory (Hugging Face layout) for tests, written once per test file for each
 * architecture and variant and removed after the file's tests. Treat it as read-only.
 */
export function tinyModel(architecture: Architecture, variant: TinyModelVariant = {}): TinyModel {
  const key = JSON.stringify({ architecture, ...variant });
  let model = made.get(key);
  if (!model) {
    model = makeTinyModel(path.join(fixtureRoot(), `${architecture}-${made.size}`), { architecture, ...variant });
    made.set(key, model);
  }
  return model;
}

/** The fixture model loaded on a kernel backend, by default the TypeScript reference (cached like `tinyModel`). */
export function loadTinyModel(architecture: Architecture, variant: TinyModelVariant = {}, backend: KernelBackend = "ts"): LoadedModel {
  const key = JSON.stringify({ architecture, ...variant, backend });
  let model = loaded.get(key);
  if (!model) {
    model = loadModel(tinyModel(architecture, variant).dir, { kernels: kernelsForTests(backend) });
    loaded.set(key, model);
  }
  return model;
}
