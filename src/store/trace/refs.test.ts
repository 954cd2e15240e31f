import { describe, expect, it } from "vitest";
import { formatRef, isWeaveRefString, parseWeaveRef } from "./refs.js";

describe("weave refs", () => {
  it("parses object, op, table and call refs", () => {
    expect(parseWeaveRef("weave:///e/p/object/ds:abc")).toEqual({ kind: "object", entity: "e", project: "p", name: "ds", version: "abc", extra: [] });
    expect(parseWeaveRef("weave:///e/p/op/fn:latest/")).toMatchObject({ kind: "op", name: "fn", version: "latest", extra: [] });
    expect(parseWeaveRef("weave:///e/p/table/0123abc/id/rowdigest")).toEqual({ kind: "table", entity: "e", project: "p", digest: "0123abc", extra: ["id", "rowdigest"] });
    expect(parseWeaveRef("weave:///e/p/call/0190-ab")).toMatchObject({ kind: "call", id: "0190-ab" });
  });

  it("percent-decodes extra path values and encodes them back", () => {
    const uri = "weave:///e/p/object/o:v1/key/a%2Fb%20c/index/2/attr/x";
    const ref = parseWeaveRef(uri);
    expect(ref.extra).toEqual(["key", "a/b c", "index", "2", "attr", "x"]);
    expect(formatRef(ref)).toBe(uri);
  });

  it.each([
    "wandb-artifact:///e/p/x",
    "weave:///e/p",
    "weave:///e/p/object/noversion",
    "weave:///e/p/object/a:b:c",
    "weave:///e/p/widget/x:y",
    "weave:///e/p/object/o:v0/key",
    "weave:///e/p/object/o:v0/edge/x",
    "weave:///e/p/object/o:v0/index/first",
    "weave:////p/object/o:v0",
  ])("rejects %s", (uri) => {
    expect(() => parseWeaveRef(uri)).toThrow();
  });

  it("knows what is a ref string", () => {
    expect(isWeaveRefString("weave:///e/p/object/o:v0")).toBe(true);
    expect(isWeaveRefString("https://x")).toBe(false);
    expect(isWeaveRefString(42)).toBe(false);
  });
});
