import { TrainerThreads } from "../engine/train/thread/trainer-threads.js";
import type { DialectName } from "../store/db.js";
import { EngineTrainer } from "../worker/engine-trainer.js";
import { startTestApp, type TestApp, type TestAppOptions } from "./app.js";
import { tinyModel } from "./models.js";

/** The served id of the real tiny model in a training app. */
export const TINY_BASE_MODEL = "tiny/qwen2";

/**
 * A test app that trains and serves for real: its job worker runs the engine trainer (trainer
 * threads) and its chat endpoint the engine runtime, both on the tiny qwen2 fixture model served as
 * `tiny/qwen2` (the same weights as `loadTinyModel("qwen2")`).
 */
export async function startTrainingApp(dialect: DialectName, options: TestAppOptions = {}): Promise<TestApp> {
  const trainer = new EngineTrainer(new TrainerThreads({ idleMs: 60_000 }));
  return startTestApp(dialect, {
    ...options,
    servedModels: { [TINY_BASE_MODEL]: tinyModel("qwen2").dir, ...options.servedModels },
    worker: { trainer, ...options.worker },
  });
}
