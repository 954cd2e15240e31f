import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tinyModel } from "../../testing/models.js";
import { ModelCatalog } from "../catalog.js";
import { defaultSamplingParams } from "../sampling/params.js";
import { EngineRegistry } from "./engine-registry.js";
import { LocalEngine } from "./local-engine.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-registry-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function servedModels(): ModelCatalog {
  fs.cpSync(tinyModel("qwen2").dir, path.join(root, "org", "tiny"), { recursive: true });
  fs.mkdirSync(path.join(root, "org", "broken"), { recursive: true });
  fs.writeFileSync(path.join(root, "org", "broken", "config.json"), JSON.stringify({ model_type: "qwen2" }));
  return new ModelCatalog([root]);
}

describe("EngineRegistry", () => {
  it("starts one engine per model on first use, shares it, and stops every thread on close", async () => {
    const registry = new EngineRegistry(servedModels(), { priorityModels: ["org/tiny"], scheduler: { maxRunningSequences: 4 } });
    expect(registry.started()).toEqual([]);
    const [first, second] = await Promise.all([registry.get("org/tiny"), registry.get("org/tiny")]);
    expect(first).toBe(second);
    expect(first).toBeInstanceOf(LocalEngine);
    expect(first.info).toMatchObject({ id: "org/tiny", priorityScheduling: true });
    expect(registry.started()).toEqual(["org/tiny"]);

    const events = [];
    for await (const event of first.generate({ requestId: "r", promptTokenIds: [1, 2, 3], params: defaultSamplingParams({ maxTokens: 2 }) })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "finished" });

    await registry.close();
    await expect((first as LocalEngine).stats()).rejects.toMatchObject({ kind: "closed" });
    await expect(registry.get("org/tiny")).rejects.toMatchObject({ kind: "closed" });
  });

  it("reports unknown models and load failures, and retries a failed model on the next request", async () => {
    const registry = new EngineRegistry(servedModels());
    try {
      await expect(registry.get("org/absent")).rejects.toMatchObject({ kind: "invalid_request", message: "The model 'org/absent' is not served here" });
      await expect(registry.get("org/broken")).rejects.toThrow(/hidden_size/);
      expect(registry.started()).toEqual([]);
      // Repair the model: the next request loads it.
      fs.rmSync(path.join(root, "org", "broken"), { recursive: true });
      fs.cpSync(tinyModel("qwen2").dir, path.join(root, "org", "broken"), { recursive: true });
      expect((await registry.get("org/broken")).info.id).toBe("org/broken");
    } finally {
      await registry.close();
    }
  });
});
