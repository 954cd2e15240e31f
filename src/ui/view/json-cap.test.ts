import { describe, expect, it } from "vitest";
import { capString, entriesOf, kindOf, preview } from "./json-cap.js";

describe("JSON viewer caps", () => {
  it("caps long strings and says how much was left out", () => {
    const big = "x".repeat(5_000_000);
    const capped = capString(big);
    expect(capped.text).toHaveLength(2000);
    expect(capped.omitted).toBe(5_000_000 - 2000);
    expect(capString("short")).toEqual({ text: "short", omitted: 0 });
  });

  it("lists the first entries of big arrays and objects", () => {
    const array = Array.from({ length: 250 }, (_, i) => i);
    expect(entriesOf(array)).toMatchObject({ more: 150 });
    expect(entriesOf(array).entries[99]).toEqual(["99", 99]);
    expect(entriesOf({ a: 1, b: [2] }, 1)).toEqual({ entries: [["a", 1]], more: 1 });
    expect(entriesOf("scalar")).toEqual({ entries: [], more: 0 });
  });

  it("previews collapsed values in one short line", () => {
    expect(preview([1, 2, 3])).toBe("[3 items]");
    expect(preview({ a: 1 })).toBe("{1 keys}");
    expect(preview("y".repeat(100))).toBe(`"${"y".repeat(80)}"…`);
    expect(preview(null)).toBe("null");
    expect(kindOf(true)).toBe("boolean");
  });
});
