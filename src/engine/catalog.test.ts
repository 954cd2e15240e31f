import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeBaseModelDir } from "../testing/app.js";
import { makeTempDir } from "../testing/stores.js";
import { ModelCatalog } from "./catalog.js";

describe("ModelCatalog", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = makeTempDir();
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("serves model directories by their path below the root; a root that is a model by its name", () => {
    const root = tempDir();
    writeBaseModelDir(root, "org/alpha", { model_type: "llama" });
    writeBaseModelDir(root, "beta");
    fs.mkdirSync(path.join(root, "empty", "dir"), { recursive: true });
    const single = writeBaseModelDir(tempDir(), "solo", { model_type: "qwen3" });
    const catalog = new ModelCatalog([root, single, path.join(root, "does-not-exist")]);
    expect(catalog.list().map((entry) => [entry.id, entry.modelType])).toEqual([
      ["beta", "qwen2"],
      ["org/alpha", "llama"],
      ["solo", "qwen3"],
    ]);
  });

  it("prefers earlier roots on clashing ids and finds models added later", () => {
    const first = tempDir();
    const second = tempDir();
    writeBaseModelDir(first, "same", { model_type: "llama" });
    writeBaseModelDir(second, "same", { model_type: "qwen2" });
    const catalog = new ModelCatalog([first, second]);
    expect(catalog.get("same")?.modelType).toBe("llama");
    expect(catalog.get("late")).toBeUndefined();
    writeBaseModelDir(second, "late");
    expect(catalog.get("late")?.dir).toBe(path.join(second, "late"));
  });
});
