import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { type TraceClient, traceClient } from "../../../testing/trace.js";

describe.each(testDialects)("object tags and aliases on %s", (dialect) => {
  let t: TestApp;
  let c: TraceClient;
  let n = 0;
  let p: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    c = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });

  /** A fresh project with three versions of `obj`; returns their digests. */
  async function publishThree(): Promise<string[]> {
    p = `alice/labels-${++n}`;
    const digests: string[] = [];
    for (const i of [0, 1, 2]) digests.push((await c.post("/obj/create", { obj: { project_id: p, object_id: "obj", val: { i } } })).json().digest);
    return digests;
  }
  const addTags = (version: string, tags: string[], objectId = "obj") => c.put(`/objs/${objectId}/versions/${version}/tags`, { project_id: p, tags });
  const removeTags = (version: string, tags: string[]) => c.post(`/objs/obj/versions/${version}/tags/remove`, { project_id: p, tags });
  const setAliases = (digest: string, aliases: string[], objectId = "obj") => c.put(`/objs/${objectId}/aliases`, { project_id: p, digest, aliases });
  const removeAliases = (aliases: string[]) => c.post("/objs/obj/aliases/remove", { project_id: p, aliases });
  const enriched = async () =>
    (await c.post("/objs/query", { project_id: p, include_tags_and_aliases: true })).json().objs.map((o: { version_index: number; tags: string[]; aliases: string[] }) => ({
      v: o.version_index,
      tags: o.tags,
      aliases: o.aliases,
    }));

  it("adds, lists and removes tags without touching digests", async () => {
    const [d0, d1] = await publishThree();
    expect((await addTags(d0 as string, ["staging", "reviewed", "reviewed"])).json()).toEqual({});
    expect((await addTags("v1", ["v0", "latest"])).statusCode).toBe(200);
    expect(await enriched()).toEqual([
      { v: 0, tags: ["reviewed", "staging"], aliases: [] },
      { v: 1, tags: ["latest", "v0"], aliases: [] },
      { v: 2, tags: [], aliases: ["latest"] },
    ]);
    expect((await c.get("/tags", { project_id: p })).json()).toEqual({ tags: ["latest", "reviewed", "staging", "v0"] });
    const tagged = (await c.post("/objs/query", { project_id: p, filter: { tags: ["staging", "v0"] } })).json().objs;
    expect(tagged.map((o: { digest: string }) => o.digest)).toEqual([d0, d1]);
    expect((await removeTags(d0 as string, ["staging", "never-there"])).statusCode).toBe(200);
    expect((await enriched())[0].tags).toEqual(["reviewed"]);
    expect((await c.post("/obj/read", { project_id: p, object_id: "obj", digest: d0, include_tags_and_aliases: true })).json().obj).toMatchObject({ tags: ["reviewed"], aliases: [] });
    expect((await c.post("/obj/read", { project_id: p, object_id: "obj", digest: d0 })).json().obj.digest).toBe(d0);
  });

  it.each(["my.tag", "a+b", " leading", "two  spaces", "x".repeat(257), ""])("rejects the tag %j with 400", async (tag) => {
    const [d0] = await publishThree();
    const res = await addTags(d0 as string, [tag]);
    expect(res.statusCode).toBe(400);
    expect(res.json().reason).toMatch(/tag name/);
  });

  it("moves an alias between versions and resolves it wherever a digest is accepted", async () => {
    const [d0, d1] = await publishThree();
    expect((await setAliases(d0 as string, ["prod", "my-deploy.v2", "has spaces"])).json()).toEqual({});
    expect((await c.post("/obj/read", { project_id: p, object_id: "obj", digest: "prod" })).json().obj.digest).toBe(d0);
    expect((await setAliases("v1", ["prod"])).statusCode).toBe(200);
    expect((await c.post("/obj/read", { project_id: p, object_id: "obj", digest: "prod" })).json().obj.digest).toBe(d1);
    expect(await enriched()).toEqual([
      { v: 0, tags: [], aliases: ["has spaces", "my-deploy.v2"] },
      { v: 1, tags: [], aliases: ["prod"] },
      { v: 2, tags: [], aliases: ["latest"] },
    ]);
    expect((await c.get("/aliases", { project_id: p })).json()).toEqual({ aliases: ["has spaces", "my-deploy.v2", "prod"] });
    const byAlias = (await c.post("/objs/query", { project_id: p, filter: { aliases: ["prod", "latest"] } })).json().objs;
    expect(byAlias.map((o: { version_index: number }) => o.version_index)).toEqual([1, 2]);
    // An alias is a digest for tags, refs and deletion too.
    expect((await addTags("prod", ["blessed"])).statusCode).toBe(200);
    expect((await c.post("/refs/read_batch", { refs: [`weave:///${p}/object/obj:prod`] })).json().vals).toEqual([{ i: 1 }]);
    expect((await c.post("/obj/delete", { project_id: p, object_id: "obj", digests: ["prod"] })).json().deleted_versions[0].digest).toBe(d1);
    expect((await removeAliases(["prod", "unknown"])).statusCode).toBe(200);
    expect((await c.get("/aliases", { project_id: p })).json().aliases).toEqual(["has spaces", "my-deploy.v2"]);
  });

  it.each(["latest", "v0", "path/slash", "has:colon", "", "   ", "a".repeat(129)])("rejects the alias %j with 400", async (alias) => {
    const [d0] = await publishThree();
    expect((await setAliases(d0 as string, [alias])).statusCode).toBe(400);
  });

  it("answers 404 for labels on missing or deleted versions", async () => {
    const [d0] = await publishThree();
    expect((await addTags("nope", ["x"])).statusCode).toBe(404);
    expect((await addTags("v0", ["x"], "other")).statusCode).toBe(404);
    expect((await setAliases("v7", ["x"])).statusCode).toBe(404);
    await c.post("/obj/delete", { project_id: p, object_id: "obj", digests: [d0] });
    const deleted = await setAliases(d0 as string, ["x"]);
    expect(deleted.statusCode).toBe(404);
    expect(deleted.json().reason).toMatch(/not found/);
    expect((await addTags("v0", ["x"])).statusCode).toBe(404);
  });

  it("validates the listing queries", async () => {
    await publishThree();
    expect((await c.get("/tags")).statusCode).toBe(422);
    expect((await c.get("/aliases", { project_id: "bob/secret" })).statusCode).toBe(404);
  });
});
