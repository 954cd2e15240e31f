import { afterAll, describe, expect, it } from "vitest";
import { openTestStore, type TestStore, testDialects } from "../testing/stores.js";
import { deleteResponse, findResponse, saveResponse } from "./stored-responses.js";

describe.each(testDialects)("stored responses (%s)", (dialect) => {
  const stores: TestStore[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
  });

  it("keeps a response for its entity only, and deletes it", async () => {
    const store = await openTestStore(dialect);
    stores.push(store);
    const conversation = [
      { role: "user", content: "Hi ✓" },
      { role: "assistant", content: "Hello" },
    ];
    await saveResponse(store.db, { id: "resp_1", entity: "alice", model: "m", conversation, body: { id: "resp_1", output: [] } });
    const found = await findResponse(store.db, "alice", "resp_1");
    expect(found).toMatchObject({ id: "resp_1", entity: "alice", model: "m", conversation, body: { id: "resp_1", output: [] } });
    expect(await findResponse(store.db, "bob", "resp_1")).toBeUndefined();
    expect(await deleteResponse(store.db, "bob", "resp_1")).toBe(false);
    expect(await deleteResponse(store.db, "alice", "resp_1")).toBe(true);
    expect(await findResponse(store.db, "alice", "resp_1")).toBeUndefined();
  });
});
