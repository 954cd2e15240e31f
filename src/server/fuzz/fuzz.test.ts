import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../testing/app.js";
import { testDialects } from "../../testing/stores.js";
import { startOf } from "../../testing/trace.js";
import { exampleOf, pathsOf, replaceAt } from "./openapi-bodies.js";
import { accept, authorizationHeader, authVariant, contentLengthDelta, contentType, hostileStrings, queryString } from "./request-variants.js";

/**
 * Issue 12 item 5: property-based fuzzing of every route in /openapi.json with random and mutated
 * valid bodies, path parameters, raw query strings (the route's own parameters, repeated, raw or
 * broken escapes) and headers (content type, a Content-Length that does not match the body, the
 * key presented in wrong ways, accept), under alice's key, on both databases. Every answer must be
 * below 500 (but a route's deliberate 501, or 503 with no engine), carry no stack trace, and come
 * quickly; /health must keep answering; bob's data must be unchanged.
 * `npm test` runs a brief pass; FLYWHEEL_FUZZ_RUNS=N runs N requests per database
 * (`npm run test:fuzz` runs 20,000).
 */
const RUNS = Number(process.env.FLYWHEEL_FUZZ_RUNS ?? 300);
const SLOW_MS = 5000;

interface Route {
  method: string;
  path: string;
  body: unknown;
  queryNames: string[];
}

interface Operation {
  requestBody?: { content: { "application/json": { schema: unknown } } };
  parameters?: { name: string; in: string }[];
}

describe.each(testDialects)("fuzzing every route on %s", (dialect) => {
  let t: TestApp;
  let routes: Route[] = [];
  let bobSnapshot: string;
  const findings: string[] = [];
  let sent = 0;
  const statuses = new Map<number, number>();

  const bobState = async () => {
    const models = (await t.request(t.keys.bob, { method: "GET", url: "/v1/preview/models?project=secret" })).body;
    const calls = (await t.request(t.keys.bob, { method: "POST", url: "/trace/calls/query", payload: { project_id: "bob/secret" } })).body;
    return JSON.stringify({ models, calls });
  };

  beforeAll(async () => {
    t = await startTestApp(dialect);
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json() as { paths: Record<string, Record<string, Operation>> };
    routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        body: operation.requestBody ? exampleOf(operation.requestBody.content["application/json"].schema) : undefined,
        queryNames: (operation.parameters ?? []).filter((parameter) => parameter.in === "query").map((parameter) => parameter.name),
      })),
    );
    await t.request(t.keys.bob, { method: "POST", url: "/v1/preview/models", payload: { project: "secret", name: "m", base_model: "test/base" } });
    await t.request(t.keys.bob, { method: "POST", url: "/trace/call/start", payload: { start: startOf("bob/secret", { id: "bob-call", op_name: "secret-op" }) } });
    bobSnapshot = await bobState();
  });
  afterAll(async () => {
    const byStatus = [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}×${count}`)
      .join(" ");
    console.log(`fuzz on ${dialect}: ${sent} requests over ${routes.length} routes (${byStatus}), ${findings.length} findings${findings.length > 0 ? `:\n${findings.join("\n")}` : ""}`);
    await t?.close();
  });

  const json = fc.jsonValue({ maxDepth: 3 });
  const pathValue = fc.oneof(fc.constantFrom(...hostileStrings), fc.uuid(), fc.string({ maxLength: 20 }));
  // The route first, so the query string can use the route's own parameter names.
  const request = fc.nat().chain((routeIndex) =>
    fc.record({
      routeIndex: fc.constant(routeIndex),
      pathValue,
      body: fc.oneof(
        { weight: 3, arbitrary: fc.tuple(fc.nat(), fc.oneof(json, fc.constantFrom(...hostileStrings))).map(([at, value]) => ({ mutateAt: at, value })) },
        { weight: 1, arbitrary: json.map((value) => ({ whole: value })) },
      ),
      /** A body on a GET or DELETE too, now and then. */
      bodyOnAnyMethod: fc.boolean(),
      query: queryString(routes[routeIndex % routes.length]!.queryNames),
      contentType,
      contentLengthDelta,
      auth: authVariant,
      accept,
    }),
  );

  it(
    "answers every request below 500, without a stack trace, quickly, and leaves the other tenant's data alone",
    async () => {
      expect(routes.length).toBeGreaterThan(50);
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const route = routes[r.routeIndex % routes.length]!;
          const url = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(r.pathValue));
          let payload: unknown;
          if ((route.method !== "GET" && route.method !== "DELETE") || r.bodyOnAnyMethod) {
            if ("whole" in r.body) payload = r.body.whole;
            else {
              const paths = pathsOf(route.body ?? {});
              payload = replaceAt(route.body ?? {}, paths[r.body.mutateAt % paths.length]!, r.body.value);
            }
          }
          const text = payload === undefined ? undefined : JSON.stringify(payload);
          // Alice fuzzes; bob's key is used only to read (his data must not change).
          const headers: Record<string, string> = {};
          const authorization = authorizationHeader(r.auth, t.keys.alice);
          if (authorization !== undefined) headers.authorization = authorization;
          if (r.accept !== undefined) headers.accept = r.accept;
          if (text !== undefined && r.contentType !== undefined) headers["content-type"] = r.contentType;
          if (text !== undefined && r.contentLengthDelta !== 0) headers["content-length"] = String(Math.max(0, Buffer.byteLength(text) + r.contentLengthDelta));
          const target = r.query === "" ? url : `${url}?${r.query}`;
          const started = performance.now();
          const res = await t.app.inject({ method: route.method as "GET", url: target, headers, ...(text !== undefined ? { payload: text } : {}) });
          sent++;
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          const ms = performance.now() - started;
          // Deliberate 5xx answers: a route this server does not implement (501), no engine to run a model (503).
          const deliberate = res.statusCode === 501 || (res.statusCode === 503 && /No inference engine/i.test(res.body));
          const problem = res.statusCode >= 500 && !deliberate ? `status ${res.statusCode}` : /\n\s+at [\w.<]/.test(res.body) ? "stack trace in body" : ms > SLOW_MS ? `took ${ms.toFixed(0)} ms` : undefined;
          if (problem) {
            findings.push(`${route.method} ${target.slice(0, 300)} → ${problem}: ${res.body.slice(0, 200)} (headers ${JSON.stringify(headers).slice(0, 300)}, body ${text?.slice(0, 200)})`);
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
    },
    600_000 + RUNS * 200,
  );
});
