import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../testing/app.js";

/**
 * Every method and path of the tracing and evaluation catalogue (`docs/api/overview.md#endpoints-trace`),
 * `<s>` for a path segment.
 */
const CATALOGUE = [
  "POST /call/end",
  "POST /call/read",
  "POST /call/start",
  "POST /call/update",
  "POST /call/upsert_batch",
  "POST /calls/delete",
  "POST /calls/query_stats",
  "POST /calls/stats",
  "POST /calls/stream_query",
  "POST /calls/usage",
  "POST /trace/usage",
  "POST /cost/create",
  "POST /cost/purge",
  "POST /cost/query",
  "POST /feedback/batch/create",
  "POST /feedback/create",
  "POST /feedback/payload_schema",
  "POST /feedback/purge",
  "POST /feedback/query",
  "POST /feedback/replace",
  "POST /feedback/stats",
  "POST /file/content",
  "POST /file/create",
  "POST /files/query_stats",
  "GET /aliases",
  "POST /obj/create",
  "POST /obj/delete",
  "POST /obj/read",
  "POST /objs/query",
  "PUT /objs/<s>/aliases",
  "POST /objs/<s>/aliases/remove",
  "PUT /objs/<s>/versions/<s>/tags",
  "POST /objs/<s>/versions/<s>/tags/remove",
  "GET /tags",
  "POST /otel/v1/traces",
  "POST /refs/read_batch",
  "GET /geolocate",
  "GET /health",
  "GET /server_info",
  "POST /service/projects_info",
  "GET /version",
  "POST /table/create",
  "POST /table/create_from_digests",
  "POST /table/query",
  "POST /table/query_stats",
  "POST /table/query_stats_batch",
  "POST /table/update",
  "POST /table/query_stream",
  "POST /threads/stream_query",
  "GET /inference/analysis/<s>/models",
  "GET /inference/<s>/v2/hardware",
  "GET /inference/router/<s>/models",
  "POST /annotation_queues",
  "POST /annotation_queues/query",
  "POST /annotation_queues/stats",
  "DELETE /annotation_queues/<s>",
  "GET /annotation_queues/<s>",
  "PUT /annotation_queues/<s>",
  "POST /annotation_queues/<s>/items",
  "POST /annotation_queues/<s>/items/query",
  "POST /annotation_queues/<s>/items/<s>/progress",
  "POST /evaluations/evaluate_model",
  "POST /evaluations/status",
  "GET /v2/<s>/<s>/evaluations",
  "POST /v2/<s>/<s>/evaluations",
  "DELETE /v2/<s>/<s>/evaluations/<s>",
  "GET /v2/<s>/<s>/evaluations/<s>/versions/<s>",
  "POST /calls/score",
  "DELETE /v2/<s>/<s>/scores",
  "GET /v2/<s>/<s>/scores",
  "POST /v2/<s>/<s>/scores",
  "GET /v2/<s>/<s>/scores/<s>",
  "POST /image/create",
  "GET /v2/<s>/<s>/ops",
  "POST /v2/<s>/<s>/ops",
  "DELETE /v2/<s>/<s>/ops/<s>",
  "GET /v2/<s>/<s>/ops/<s>/versions/<s>",
  "GET /v2/<s>/<s>/datasets",
  "POST /v2/<s>/<s>/datasets",
  "DELETE /v2/<s>/<s>/datasets/<s>",
  "GET /v2/<s>/<s>/datasets/<s>/versions/<s>",
  "GET /v2/<s>/<s>/scorers",
  "POST /v2/<s>/<s>/scorers",
  "DELETE /v2/<s>/<s>/scorers/<s>",
  "GET /v2/<s>/<s>/scorers/<s>/versions/<s>",
  "GET /v2/<s>/<s>/models",
  "POST /v2/<s>/<s>/models",
  "DELETE /v2/<s>/<s>/models/<s>",
  "GET /v2/<s>/<s>/models/<s>/versions/<s>",
  "DELETE /v2/<s>/<s>/evaluation_runs",
  "GET /v2/<s>/<s>/evaluation_runs",
  "POST /v2/<s>/<s>/evaluation_runs",
  "GET /v2/<s>/<s>/evaluation_runs/<s>",
  "POST /v2/<s>/<s>/evaluation_runs/<s>/finish",
  "DELETE /v2/<s>/<s>/predictions",
  "GET /v2/<s>/<s>/predictions",
  "POST /v2/<s>/<s>/predictions",
  "GET /v2/<s>/<s>/predictions/<s>",
  "POST /v2/<s>/<s>/predictions/<s>/finish",
  "POST /v2/<s>/<s>/eval_results/query",
];

describe("the trace API catalogue", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp("sqlite");
  });
  afterAll(async () => {
    await t.close();
  });

  it("serves every endpoint of docs/api/overview.md#endpoints-trace under the trace base path", async () => {
    const paths = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json().paths as Record<string, Record<string, unknown>>;
    const served = new Set(Object.entries(paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, "<s>")}`)));
    expect(CATALOGUE.filter((entry) => !served.has(entry.replace(" ", " /trace")))).toEqual([]);
    expect(CATALOGUE).toHaveLength(100);
  });
});
