import { describe, expect, it } from "vitest";
import { callToDatasetRow, latestVersions, tableDigest } from "./datasets.js";

const version = (object_id: string, version_index: number, created_at: string) => ({ object_id, version_index, created_at, digest: `d${version_index}`, name: object_id, description: null, rows: "weave:///e/p/table/ab12" });

describe("datasets", () => {
  it("keeps the newest version of each dataset, newest first", () => {
    const latest = latestVersions([version("a", 0, "2024-01-01"), version("b", 0, "2024-01-02"), version("a", 1, "2024-01-03")]);
    expect(latest.map((v) => [v.object_id, v.version_index])).toEqual([
      ["a", 1],
      ["b", 0],
    ]);
  });

  it("reads a table ref's digest and turns a call into a row", () => {
    expect(tableDigest("weave:///e/p/table/ab12")).toBe("ab12");
    expect(tableDigest("weave:///e/p/object/x:1")).toBeUndefined();
    expect(callToDatasetRow({ id: "c1", op_name: "op", inputs: { q: 1 }, output: "a" })).toEqual({ inputs: { q: 1 }, output: "a", source_call_id: "c1", source_op: "op" });
    expect(callToDatasetRow({ id: "c2", op_name: "op" })).toMatchObject({ inputs: {}, output: null });
  });
});
