import { describe, expect, it } from "vitest";
import { buildCallTree, flattenTree } from "./call-tree.js";

const at = (seconds: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, seconds)).toISOString();

describe("call tree", () => {
  const calls = [
    { id: "b", parent_id: "root", started_at: at(5), ended_at: at(10) },
    { id: "root", parent_id: null, started_at: at(0), ended_at: at(10) },
    { id: "a", parent_id: "root", started_at: at(1), ended_at: at(3) },
    { id: "a1", parent_id: "a", started_at: at(2), ended_at: null },
    { id: "orphan", parent_id: "missing", started_at: at(4), ended_at: at(6) },
  ];

  it("nests children in start order and keeps orphans as roots", () => {
    const roots = buildCallTree(calls);
    expect(roots.map((node) => node.call.id)).toEqual(["root", "orphan"]);
    expect(flattenTree(roots).map((node) => [node.call.id, node.depth])).toEqual([
      ["root", 0],
      ["a", 1],
      ["a1", 2],
      ["b", 1],
      ["orphan", 0],
    ]);
  });

  it("lays out a timeline over the trace's span; a running call runs to the last known time", () => {
    const rows = flattenTree(buildCallTree(calls));
    const byId = Object.fromEntries(rows.map((node) => [node.call.id, node]));
    expect(byId.root).toMatchObject({ offset: 0, width: 1 });
    expect(byId.a).toMatchObject({ offset: 0.1, width: 0.2 });
    expect(byId.a1).toMatchObject({ offset: 0.2, width: 0.8 });
    expect(byId.b!.offset).toBe(0.5);
  });

  it("survives a self-parented call and an empty trace", () => {
    expect(buildCallTree([{ id: "x", parent_id: "x", started_at: at(0), ended_at: at(0) }]).map((node) => node.call.id)).toEqual(["x"]);
    expect(buildCallTree([])).toEqual([]);
  });
});
