import { describe, expect, it } from "vitest";
import { mergeTagged } from "./merge-events.js";

async function* delayed(values: number[], delayMs: number): AsyncGenerator<number> {
  for (const value of values) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    yield value;
  }
}

describe("mergeTagged", () => {
  it("yields every value of every source, tagged with its source, in arrival order", async () => {
    const seen: { source: number; value: number }[] = [];
    for await (const item of mergeTagged([delayed([1, 2, 3], 15), delayed([10, 20], 4)])) seen.push(item);
    expect(seen.filter((item) => item.source === 0).map((item) => item.value)).toEqual([1, 2, 3]);
    expect(seen.filter((item) => item.source === 1).map((item) => item.value)).toEqual([10, 20]);
    // The fast source is not held back by the slow one.
    expect(seen[0]).toEqual({ source: 1, value: 10 });
  });

  it("fails when a source fails", async () => {
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      throw new Error("boom");
    }
    const read = async () => {
      for await (const _ of mergeTagged([failing(), delayed([5], 50)])) void _;
    };
    await expect(read()).rejects.toThrow("boom");
  });
});
