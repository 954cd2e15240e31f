import fs from "node:fs";
import path from "node:path";
import { TrainerThreads } from "../engine/train/thread/trainer-threads.js";
import type { DialectName } from "../store/db.js";
import { EngineTrainer } from "../worker/engine-trainer.js";
import { startTestApp, type TestApp, type TestAppOptions } from "./app.js";
import { tinyModel } from "./models.js";

/** The served id of the real tiny model in a training app. */
export const TINY_BASE_MODEL = "tiny/qwen2";

/**
 * A test app whose job worker trains for real (the engine trainer, in trainer threads) on the
 * tiny qwen2 fixture model, served as `tiny/qwen2` (the same weights as `loadTinyModel("qwen2")`).
 */
export async function startTrainingApp(dialect: DialectName, options: TestAppOptions = {}): Promise<TestApp> {
  const trainer = new EngineTrainer(new TrainerThreads({ idleMs: 60_000 }));
  const t = await startTestApp(dialect, { ...options, worker: { trainer, ...options.worker } });
  fs.cpSync(tinyModel("qwen2").dir, path.join(t.dataDir, "models", ...TINY_BASE_MODEL.split("/")), { recursive: true });
  return t;
}
