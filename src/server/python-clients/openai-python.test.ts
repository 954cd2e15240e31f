import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../../testing/app.js";
import { testPython } from "../../testing/python-env.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../../testing/trainer-app.js";

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The real openai-python on the wire: `art_wire.py` drives every preview route through
 * openai-python's AsyncAPIClient as ART's serverless client does (its headers — a JSON content type
 * on body-less requests too —, retries, error mapping and cursor pagination) and chat completions
 * through the `openai` package, against this server with the real tiny model. The virtual
 * environment is the project's Python test environment (`scripts/python/env.mjs`).
 */
describe("openai-python against Flywheel", () => {
  let t: TestApp;
  let baseUrl: string;
  let python: string;
  beforeAll(async () => {
    python = testPython();
    t = await startTrainingApp("sqlite");
    baseUrl = `${await t.app.listen({ port: 0, host: "127.0.0.1" })}/v1`;
  }, 600_000);
  afterAll(async () => {
    await t?.close();
  });

  it("answers every request the client sends with what it earned", async () => {
    const env = { ...process.env, FLYWHEEL_BASE_URL: baseUrl, FLYWHEEL_API_KEY: t.keys.alice, FLYWHEEL_BASE_MODEL: TINY_BASE_MODEL };
    const { stdout } = await run(python, [path.join(here, "art_wire.py")], { env, maxBuffer: 16 * 1024 * 1024, timeout: 300_000 }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`art_wire.py failed:\n${error.stderr ?? ""}\n${error.stdout ?? ""}`);
    });
    const summary = JSON.parse(stdout.trim().split("\n").pop()!);
    expect(summary).toMatchObject({
      chat_finish_reason: expect.stringMatching(/^(stop|length)$/),
      bad_seed_loc: ["body", "seed"],
      conflict_detail: expect.stringMatching(/already exists/),
      checkpoints_before: [],
      logged_keys: expect.any(Array),
      job_status: "succeeded",
      checkpoints_after: [1, 0],
      sft_cancel_status: expect.stringMatching(/^(cancelled|running|queued)$/),
      not_found_steps: [999],
      model_deleted: true,
      unauthorized_detail: { detail: "Invalid or revoked API key" },
    });
    expect(summary.stream_chunks).toBeGreaterThan(1);
    expect(summary.event_types[0]).toBe("training_started");
    expect(summary.event_types).toContain("gradient_step");
    expect(summary.event_types.at(-1)).toBe("training_ended");
  }, 600_000);
});
