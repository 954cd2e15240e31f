import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ModelCatalog } from "../../../engine/catalog.js";
import { LocalBlobStore } from "../../../store/blobs.js";
import { insertCheckpoint } from "../../../store/checkpoints.js";
import { createModel } from "../../../store/models.js";
import { writeBaseModelDir } from "../../../testing/app.js";
import { openTestStore, type TestStore, testDialects } from "../../../testing/stores.js";
import { ApiError } from "../../errors.js";
import { classifyModelName, type ModelResolverDeps, resolveModel } from "./model-resolver.js";

describe.each(testDialects)("model resolution on %s", (dialect) => {
  let store: TestStore;
  let deps: ModelResolverDeps;
  beforeEach(async () => {
    store = await openTestStore(dialect);
    const modelsRoot = path.join(store.dataDir, "models");
    writeBaseModelDir(modelsRoot, "org/base");
    writeBaseModelDir(modelsRoot, "org/other");
    deps = { db: store.db, blobs: new LocalBlobStore(store.dataDir), dataDir: store.dataDir, catalog: new ModelCatalog([modelsRoot]) };
  });
  afterEach(async () => {
    await store.close();
  });

  const resolve = (model: string | null, entity = "alice") => resolveModel(classifyModelName(model, deps.catalog), entity, deps);

  async function statusOf(promise: Promise<unknown>): Promise<{ status: number; message: string; param: unknown }> {
    try {
      await promise;
    } catch (error) {
      if (error instanceof ApiError) return { status: error.status, message: error.message, param: error.options.param };
      throw error;
    }
    throw new Error("expected an error");
  }

  async function trainedModel(entity = "alice", project = "proj", name = "agent") {
    return (await createModel(store.db, { entity, project, name, base_model: "org/base" })).model;
  }

  async function adapterCheckpoint(modelId: string, step: number) {
    const digest = await deps.blobs.put(Buffer.from(`weights of step ${step}`));
    return insertCheckpoint(store.db, { modelId, step, files: { "adapter_model.safetensors": digest } });
  }

  it("resolves base ids to themselves without an adapter", async () => {
    expect(await resolve("org/base")).toEqual({ baseModelId: "org/base", responseModel: "org/base", trained: false });
  });

  it("answers unknown and malformed names with vLLM's 404", async () => {
    for (const name of ["nope/missing", "wandb-artifact:///alice/proj/none", "ghost@1", "wandb-artifact:///alice/proj"]) {
      expect(await statusOf(resolve(name))).toEqual({ status: 404, message: `The model \`${name}\` does not exist.`, param: "model" });
    }
  });

  it("needs `model` when several base models are served", async () => {
    const error = await statusOf(resolve(null));
    expect(error).toMatchObject({ status: 400, param: "model" });
    expect(error.message).toContain("org/base, org/other");
  });

  it("serves the base weights for a model without checkpoints, and for step 0", async () => {
    await trainedModel();
    for (const name of ["wandb-artifact:///alice/proj/agent", "wandb-artifact://alice/proj/agent:latest", "wandb-artifact:///alice/proj/agent:step0", "agent@0"]) {
      expect(await resolve(name)).toEqual({ baseModelId: "org/base", responseModel: name, trained: true });
    }
    expect((await statusOf(resolve("wandb-artifact:///alice/proj/agent:step1"))).status).toBe(404);
  });

  it("resolves latest and explicit steps to materialized adapters", async () => {
    const model = await trainedModel();
    const first = await adapterCheckpoint(model.id, 1);
    const second = await adapterCheckpoint(model.id, 2);
    const latest = await resolve("artifact:///alice/proj/agent");
    expect(latest.adapter?.id).toBe(second.id);
    expect(fs.readFileSync(path.join(latest.adapter!.dir, "adapter_model.safetensors"), "utf8")).toBe("weights of step 2");
    const pinned = await resolve("wandb-artifact:///alice/proj/agent:step1");
    expect(pinned.adapter?.id).toBe(first.id);
    expect((await resolve("agent@1")).adapter?.id).toBe(first.id);
    expect((await statusOf(resolve("agent@3"))).status).toBe(404);
  });

  it("treats another entity's model exactly like an unknown one", async () => {
    await trainedModel("bob");
    expect(await statusOf(resolve("wandb-artifact:///bob/proj/agent"))).toEqual({ status: 404, message: "The model `wandb-artifact:///bob/proj/agent` does not exist.", param: "model" });
    expect((await statusOf(resolve("agent@0"))).status).toBe(404);
    expect((await resolve("agent@0", "bob")).trained).toBe(true);
  });

  it("refuses a name@step that exists in several projects", async () => {
    await trainedModel("alice", "one");
    await trainedModel("alice", "two");
    const error = await statusOf(resolve("agent@0"));
    expect(error.status).toBe(400);
    expect(error.message).toContain("one, two");
  });
});
