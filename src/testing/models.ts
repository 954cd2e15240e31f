import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Architecture } from "../engine/checkpoint/model-config.js";
import { makeTinyModel, type TinyModel, type TinyModelOptions } from "../engine/fixtures/tiny-model.js";
import { TsKernels } from "../engine/kernels/ts/index.js";
import { type LoadedModel, loadModel } from "../engine/model/load.js";

export type TinyModelVariant = Omit<TinyModelOptions, "architecture">;

const made = new Map<string, TinyModel>();
const loaded = new Map<string, LoadedModel>();
let root: string | undefined;

function fixtureRoot(): string {
  if (!root) {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-models-"));
    const dir = root;
    process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  return root;
}

/**
 * A fixture model directory (Hugging Face layout) for tests, written once per test process for
 * each architecture and variant and removed when the process exits. Treat it as read-only.
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

/** The fixture model loaded on the TypeScript reference kernels (cached like `tinyModel`). */
export function loadTinyModel(architecture: Architecture, variant: TinyModelVariant = {}): LoadedModel {
  const key = JSON.stringify({ architecture, ...variant });
  let model = loaded.get(key);
  if (!model) {
    model = loadModel(tinyModel(architecture, variant).dir, { kernels: new TsKernels() });
    loaded.set(key, model);
  }
  return model;
}
