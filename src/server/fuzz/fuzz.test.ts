import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../testing/app.js";
import { testDialects } from "../../testing/stores.js";
import { startOf } from "../../testing/trace.js";
import { exampleOf, pathsOf, replaceAt } from "./openapi-bodies.js";

/**
 * Issue 12 item 5: property-based fuzzing of every route in /openapi.json with random and mutated
 * valid bodies, path parameters and query strings, under a valid key, on both databases. Every
 * answer must be below 500 (but a route's deliberate 501, or 503 with no engine), carry no stack
 * trace, and come quickly; /health must keep answering; another tenant's data must be unchanged.
 * `npm test` runs a brief pass; FLYWHEEL_FUZZ_RUNS=N runs N requests per database.
 */
const RUNS = Number(process.env.FLYWHEEL_FUZZ_RUNS ?? 300);
const SLOW_MS = 5000;

interface Route {
  method: string;
  path: string;
  body: unknown;
}

const hostileStrings = ["", "x", "../../etc/passwd", "%00", "\u0000", "a".repeat(5000), "💥", "null", "-1", "1e309", "00000000-0000-0000-0000-000000000000", "weave:///bob/p/call/x"];

describe.each(testDialects)("fuzzing every route on %s", (dialect) => {
  let t: TestApp;
  let routes: Route[] = [];
  let bobSnapshot: string;
  const findings: string[] = [];
  let sent = 0;

  const bobState = async () => {
    const models = (await t.request(t.keys.bob, { method: "GET", url: "/v1/preview/models?project=secret" })).body;
    const calls = (await t.request(t.keys.bob, { method: "POST", url: "/trace/calls/query", payload: { project_id: "bob/secret" } })).body;
    return JSON.stringify({ models, calls });
  };

  beforeAll(async () => {
    t = await startTestApp(dialect);
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json() as { paths: Record<string, Record<string, { requestBody?: { content: { "application/json": { schema: unknown } } } }>> };
    routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ method: method.toUpperCase(), path, body: operation.requestBody ? exampleOf(operation.requestBody.content["application/json"].schema) : undefined })),
    );
    await t.request(t.keys.bob, { method: "POST", url: "/v1/preview/models", payload: { project: "secret", name: "m", base_model: "test/base" } });
    await t.request(t.keys.bob, { method: "POST", url: "/trace/call/start", payload: { start: startOf("bob/secret", { id: "bob-call", op_name: "secret-op" }) } });
    bobSnapshot = await bobState();
  });
  afterAll(async () => {
    console.log(`fuzz on ${dialect}: ${sent} requests over ${routes.length} routes, ${findings.length} findings${findings.length > 0 ? `:\n${findings.join("\n")}` : ""}`);
    await t?.close();
  });

  const json = fc.jsonValue({ maxDepth: 3 });
  const pathValue = fc.oneof(fc.constantFrom(...hostileStrings), fc.uuid(), fc.string({ maxLength: 20 }));
  const request = fc.record({
    routeIndex: fc.nat(),
    pathValue,
    body: fc.oneof(
      { weight: 3, arbitrary: fc.tuple(fc.nat(), fc.oneof(json, fc.constantFrom(...hostileStrings))).map(([at, value]) => ({ mutateAt: at, value })) },
      { weight: 1, arbitrary: json.map((value) => ({ whole: value })) },
    ),
    query: fc.dictionary(fc.constantFrom("limit", "after", "before", "order", "project", "model_id", "x"), fc.oneof(fc.constantFrom(...hostileStrings), fc.integer().map(String)), { maxKeys: 3 }),
  });

  it("answers every request below 500, without a stack trace, quickly, and leaves the other tenant's data alone", async () => {
    expect(routes.length).toBeGreaterThan(50);
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const route = routes[r.routeIndex % routes.length]!;
        const url = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(r.pathValue));
        let payload: unknown;
        if (route.method !== "GET" && route.method !== "DELETE") {
          if ("whole" in r.body) payload = r.body.whole;
          else {
            const paths = pathsOf(route.body ?? {});
            payload = replaceAt(route.body ?? {}, paths[r.body.mutateAt % paths.length]!, r.body.value);
          }
        }
        const started = performance.now();
        // Alice fuzzes; bob's key is used only to read (his data must not change).
        const res = await t.request(t.keys.alice, {
          method: route.method as "GET",
          url,
          query: r.query,
          ...(payload !== undefined ? { payload: JSON.stringify(payload), headers: { "content-type": "application/json" } } : {}),
        });
        sent++;
        const ms = performance.now() - started;
        // Deliberate 5xx answers: a route this server does not implement (501), no engine to run a model (503).
        const deliberate = res.statusCode === 501 || (res.statusCode === 503 && /No inference engine/i.test(res.body));
        const problem =
          res.statusCode >= 500 && !deliberate ? `status ${res.statusCode}` : /\n\s+at [\w.<]/.test(res.body) ? "stack trace in body" : ms > SLOW_MS ? `took ${ms.toFixed(0)} ms` : undefined;
        if (problem) {
          findings.push(`${route.method} ${url} → ${problem}: ${res.body.slice(0, 200)} (body ${JSON.stringify(payload)?.slice(0, 200)})`);
          return false;
        }
        return true;
      }),
      { numRuns: RUNS, seed: Number(process.env.FLYWHEEL_FUZZ_SEED ?? 12) },
    );
    const health = performance.now();
    expect((await t.app.inject({ method: "GET", url: "/health" })).statusCode).toBe(200);
    expect(performance.now() - health).toBeLessThan(100);
    expect(await bobState()).toBe(bobSnapshot);
  }, 600_000);
});
