import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openTestStore, type TestStore, testDialects } from "../testing/stores.js";
import { deleteCheckpointSteps, insertCheckpoint, pageCheckpoints } from "./checkpoints.js";
import { CursorNotFoundError } from "./errors.js";
import { createModel } from "./models.js";

describe.each(testDialects)("checkpoint pages on %s", (dialect) => {
  let store: TestStore;
  let modelId: string;
  beforeEach(async () => {
    store = await openTestStore(dialect);
    modelId = (await createModel(store.db, { entity: "e", project: "p", name: "m", base_model: "b" })).model.id;
    // Inserted out of order: pages follow the step, not insertion order.
    for (const step of [3, 1, 5, 2, 4]) await insertCheckpoint(store.db, { modelId, step, files: null, metrics: { "val/reward": step / 10 } });
  });
  afterEach(async () => {
    await store.close();
  });

  it("walks ascending pages with exact has_more and ids", async () => {
    const first = await pageCheckpoints(store.db, modelId, { limit: 2, order: "asc" });
    expect(first.data.map((c) => c.step)).toEqual([1, 2]);
    expect(first.has_more).toBe(true);
    expect(first.first_id).toBe(first.data[0]!.id);
    expect(first.last_id).toBe(first.data[1]!.id);
    const second = await pageCheckpoints(store.db, modelId, { limit: 2, order: "asc", after: first.last_id });
    expect(second.data.map((c) => c.step)).toEqual([3, 4]);
    const third = await pageCheckpoints(store.db, modelId, { limit: 2, order: "asc", after: second.last_id });
    expect(third.data.map((c) => c.step)).toEqual([5]);
    expect(third.has_more).toBe(false);
    // A page that ends exactly at the last item says so.
    const exact = await pageCheckpoints(store.db, modelId, { limit: 5, order: "asc" });
    expect(exact.has_more).toBe(false);
    expect(exact.data[4]!.metrics).toEqual({ "val/reward": 0.5 });
  });

  it("walks descending pages", async () => {
    const first = await pageCheckpoints(store.db, modelId, { limit: 1, order: "desc" });
    expect(first.data.map((c) => c.step)).toEqual([5]);
    const rest = await pageCheckpoints(store.db, modelId, { limit: 10, order: "desc", after: first.last_id });
    expect(rest.data.map((c) => c.step)).toEqual([4, 3, 2, 1]);
    expect(rest.has_more).toBe(false);
  });

  it("returns an empty page with empty ids for a model without checkpoints", async () => {
    const other = (await createModel(store.db, { entity: "e", project: "p", name: "empty", base_model: "b" })).model.id;
    expect(await pageCheckpoints(store.db, other, { limit: 20, order: "asc" })).toEqual({ object: "list", data: [], has_more: false, first_id: "", last_id: "" });
  });

  it("refuses an unknown cursor instead of restarting from the top", async () => {
    await expect(pageCheckpoints(store.db, modelId, { limit: 2, order: "asc", after: "00000000-0000-4000-8000-000000000000" })).rejects.toThrow(CursorNotFoundError);
  });

  it("deletes steps and reports the missing ones", async () => {
    expect(await deleteCheckpointSteps(store.db, modelId, [2, 9, 4, 2])).toEqual({ deletedCount: 2, notFoundSteps: [9] });
    const left = await pageCheckpoints(store.db, modelId, { limit: 10, order: "asc" });
    expect(left.data.map((c) => c.step)).toEqual([1, 3, 5]);
  });
});
