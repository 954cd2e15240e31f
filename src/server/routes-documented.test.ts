import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../testing/app.js";

/**
 * Routes whose answer is not documented yet. The list only shrinks: a route that gains a schema
 * must leave it, and a new route cannot join it.
 */
const UNDOCUMENTED: string[] = [];

/**
 * Every route documents its successful answer (docs/decisions/server.md#D-SRV-015): a JSON schema
 * (`response`), the schema of each streamed item (`stream`), or, for bytes, text or no body at
 * all, its media type (`rawResponse`). The suite checks each answer against those schemas
 * (`checkResponses`), so the documentation cannot drift from the code.
 */
describe("every route's documented answer", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp("sqlite");
  });
  afterAll(async () => {
    await t.close();
  });

  it("is a response schema, a stream schema or a declared non-JSON answer", () => {
    const routes = t.app.routeCatalog.routes;
    expect(routes.length).toBeGreaterThan(150);
    const undocumented = routes.filter((route) => !route.response && !route.stream && !route.rawResponse).map((route) => `${route.method} ${route.url}`);
    expect(undocumented.sort()).toEqual([...UNDOCUMENTED].sort());
  });

  it("is checked against every answer the tests provoke", () => {
    expect(t.app.routeCatalog.checkResponses).toBe(true);
  });
});
