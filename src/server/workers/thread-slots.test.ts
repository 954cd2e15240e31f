import { describe, expect, it } from "vitest";
import { ThreadSlots } from "./thread-slots.js";

/** A task that waits until released by hand, recording how many of its kind ran at once. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("ThreadSlots", () => {
  it("runs at most `limit` tasks at once and starts the rest in arrival order", async () => {
    const slots = new ThreadSlots(2);
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    let peak = 0;
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        started.push(i);
        peak = Math.max(peak, slots.active);
        await g.opened;
        return i;
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect([started, slots.active, slots.queued]).toEqual([[0, 1], 2, 3]);
    gates[1]!.open();
    await runs[1];
    await new Promise((resolve) => setImmediate(resolve));
    expect([started, slots.active, slots.queued]).toEqual([[0, 1, 2], 2, 2]);
    for (const g of gates) g.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect([started, peak, slots.active, slots.queued]).toEqual([[0, 1, 2, 3, 4], 2, 0, 0]);
  });

  it("frees the slot of a task that fails", async () => {
    const slots = new ThreadSlots(1);
    await expect(slots.run(() => Promise.reject(new Error("bad plan")))).rejects.toThrow("bad plan");
    expect(slots.active).toBe(0);
    expect(await slots.run(async () => "next")).toBe("next");
  });

  it("refuses a limit that is not a positive integer", () => {
    expect(() => new ThreadSlots(0)).toThrow(RangeError);
    expect(() => new ThreadSlots(1.5)).toThrow(RangeError);
  });
});
