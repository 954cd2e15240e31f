import { describe, expect, it } from "vitest";
import { WaitQueue } from "./wait-queue.js";

const item = (name: string, priority: number, arrival: number) => ({ name, priority, arrival });

describe("WaitQueue", () => {
  const items = [item("a", 3, 0), item("b", 1, 1), item("c", 3, 2), item("d", -5, 3), item("e", 1, 4)];

  it("orders by priority, then arrival, with priority scheduling", () => {
    const queue = new WaitQueue<(typeof items)[number]>(true);
    for (const entry of items) queue.insert(entry);
    expect([...queue].map((entry) => entry.name)).toEqual(["d", "b", "e", "a", "c"]);
    expect(queue.shift()!.name).toBe("d");
    // A preempted request comes back at its old place.
    queue.insert(items[3]!);
    expect(queue.peek()!.name).toBe("d");
  });

  it("orders by arrival only otherwise, and removes entries", () => {
    const queue = new WaitQueue<(typeof items)[number]>(false);
    for (const entry of [...items].reverse()) queue.insert(entry);
    expect([...queue].map((entry) => entry.name)).toEqual(["a", "b", "c", "d", "e"]);
    expect(queue.remove(items[2]!)).toBe(true);
    expect(queue.remove(items[2]!)).toBe(false);
    expect(queue.length).toBe(4);
  });
});
