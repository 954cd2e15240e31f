import { describe, expect, it } from "vitest";
import { formatRoute, parseRoute, withQuery } from "./route.js";

describe("hash routes", () => {
  it("round-trips paths with reserved characters and query state", () => {
    const hash = formatRoute(["traces", "alice/my project", "calls"], { op: "weave:///x/op/a:*", roots: true, q: "a&b=c", empty: "", off: false, none: undefined });
    expect(hash).toBe("#/traces/alice%2Fmy%20project/calls?op=weave%3A%2F%2F%2Fx%2Fop%2Fa%3A*&q=a%26b%3Dc&roots=1");
    expect(parseRoute(hash)).toEqual({ path: ["traces", "alice/my project", "calls"], query: { op: "weave:///x/op/a:*", q: "a&b=c", roots: "1" } });
  });

  it("treats an empty or bare hash as the home route and tolerates bad escapes", () => {
    expect(parseRoute("")).toEqual({ path: [], query: {} });
    expect(parseRoute("#/")).toEqual({ path: [], query: {} });
    expect(parseRoute("#/models//x/?a=&b=2")).toEqual({ path: ["models", "x"], query: { b: "2" } });
    expect(parseRoute("#/bad%E0%A4%A")).toEqual({ path: ["bad%E0%A4%A"], query: {} });
  });

  it("replaces and removes query values", () => {
    const route = parseRoute("#/models/m?tab=jobs&job=j1");
    expect(withQuery(route, { job: "j2" })).toBe("#/models/m?job=j2&tab=jobs");
    expect(withQuery(route, { job: undefined, tab: "charts" })).toBe("#/models/m?tab=charts");
  });
});
