import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { basicAuth, traceClient } from "../../../testing/trace.js";

/**
 * Every trace-object route answers a project of another entity exactly like one that does not
 * exist (404), and leaves the owner's data as it was.
 */
describe.each(testDialects)("trace-object tenant isolation on %s", (dialect) => {
  let t: TestApp;
  const p = "alice/private";
  let digest: string;
  let tableDigest: string;
  let queueId: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    const alice = traceClient(t, t.keys.alice);
    digest = (await alice.post("/obj/create", { obj: { project_id: p, object_id: "secret", val: { k: 1 } } })).json().digest;
    tableDigest = (await alice.post("/table/create", { table: { project_id: p, rows: [{ r: 1 }] } })).json().digest;
    queueId = (await alice.post("/annotation_queues", { project_id: p, name: "q", scorer_refs: [] })).json().id;
    await alice.post("/v2/alice/private/datasets", { name: "ds", rows: [{ a: 1 }] });
  });
  afterAll(async () => {
    await t.close();
  });

  const routes = (project: string): InjectOptions[] => {
    const [entity, name] = project.split("/") as [string, string];
    return [
      { method: "POST", url: "/obj/create", payload: { obj: { project_id: project, object_id: "secret", val: { k: 2 } } } },
      { method: "POST", url: "/obj/read", payload: { project_id: project, object_id: "secret", digest } },
      { method: "POST", url: "/objs/query", payload: { project_id: project } },
      { method: "POST", url: "/obj/delete", payload: { project_id: project, object_id: "secret" } },
      { method: "PUT", url: `/objs/secret/versions/${digest}/tags`, payload: { project_id: project, tags: ["x"] } },
      { method: "POST", url: `/objs/secret/versions/${digest}/tags/remove`, payload: { project_id: project, tags: ["x"] } },
      { method: "PUT", url: "/objs/secret/aliases", payload: { project_id: project, digest, aliases: ["x"] } },
      { method: "POST", url: "/objs/secret/aliases/remove", payload: { project_id: project, aliases: ["x"] } },
      { method: "GET", url: `/tags?project_id=${project}` },
      { method: "GET", url: `/aliases?project_id=${project}` },
      { method: "POST", url: "/table/create", payload: { table: { project_id: project, rows: [] } } },
      { method: "POST", url: "/table/update", payload: { project_id: project, base_digest: tableDigest, updates: [] } },
      { method: "POST", url: "/table/create_from_digests", payload: { project_id: project, row_digests: [] } },
      { method: "POST", url: "/table/query", payload: { project_id: project, digest: tableDigest } },
      { method: "POST", url: "/table/query_stream", payload: { project_id: project, digest: tableDigest } },
      { method: "POST", url: "/table/query_stats", payload: { project_id: project, digest: tableDigest } },
      { method: "POST", url: "/table/query_stats_batch", payload: { project_id: project, digests: [tableDigest] } },
      { method: "POST", url: "/file/content", payload: { project_id: project, digest: "x" } },
      { method: "POST", url: "/files/query_stats", payload: { project_id: project } },
      { method: "POST", url: "/service/projects_info", payload: { project_ids: [project] } },
      { method: "POST", url: "/annotation_queues", payload: { project_id: project, name: "q", scorer_refs: [] } },
      { method: "POST", url: "/annotation_queues/query", payload: { project_id: project } },
      { method: "POST", url: "/annotation_queues/stats", payload: { project_id: project, queue_ids: [queueId] } },
      { method: "GET", url: `/annotation_queues/${queueId}?project_id=${project}` },
      { method: "PUT", url: `/annotation_queues/${queueId}`, payload: { project_id: project, name: "renamed" } },
      { method: "DELETE", url: `/annotation_queues/${queueId}?project_id=${project}` },
      { method: "POST", url: `/annotation_queues/${queueId}/items`, payload: { project_id: project, call_ids: [], display_fields: [] } },
      { method: "POST", url: `/annotation_queues/${queueId}/items/query`, payload: { project_id: project } },
      { method: "POST", url: `/annotation_queues/${queueId}/items/x/progress`, payload: { project_id: project, annotation_state: "completed" } },
      { method: "POST", url: "/image/create", payload: { project_id: project, inputs: { model: "m", prompt: "p" } } },
      ...["ops", "datasets", "scorers", "evaluations", "models"].flatMap((resource): InjectOptions[] => [
        { method: "GET", url: `/v2/${entity}/${name}/${resource}` },
        { method: "GET", url: `/v2/${entity}/${name}/${resource}/ds/versions/latest` },
        { method: "DELETE", url: `/v2/${entity}/${name}/${resource}/ds` },
      ]),
      { method: "POST", url: `/v2/${entity}/${name}/ops`, payload: {} },
      { method: "POST", url: `/v2/${entity}/${name}/datasets`, payload: { rows: [] } },
      { method: "POST", url: `/v2/${entity}/${name}/scorers`, payload: { name: "s", op_source_code: "" } },
      { method: "POST", url: `/v2/${entity}/${name}/evaluations`, payload: { name: "e", dataset: "weave:///alice/private/object/ds:latest" } },
      { method: "POST", url: `/v2/${entity}/${name}/models`, payload: { name: "m", source_code: "" } },
    ];
  };

  it("answers another entity's project with 404, like a project that does not exist", async () => {
    const asBob = (options: InjectOptions) => t.app.inject({ ...options, url: `/trace${options.url}`, headers: { authorization: basicAuth(t.keys.bob) } });
    const foreign = routes(p);
    const unknown = routes("nobody/private");
    for (let i = 0; i < foreign.length; i++) {
      const route = foreign[i] as InjectOptions;
      const res = await asBob(route);
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(404);
      const same = await asBob(unknown[i] as InjectOptions);
      expect(same.statusCode).toBe(404);
      expect(res.json().reason.replace("alice/private", "P")).toBe(same.json().reason.replace("nobody/private", "P"));
    }
  });

  it("leaves the owner's data intact", async () => {
    const alice = traceClient(t, t.keys.alice);
    expect((await alice.post("/obj/read", { project_id: p, object_id: "secret", digest: "latest" })).json().obj).toMatchObject({ digest, version_index: 0 });
    expect((await alice.post("/table/query_stats", { project_id: p, digest: tableDigest })).json()).toEqual({ count: 1 });
    expect((await alice.get(`/annotation_queues/${queueId}`, { project_id: p })).json().queue.name).toBe("q");
    expect((await alice.get("/tags", { project_id: p })).json()).toEqual({ tags: [] });
  });
});
