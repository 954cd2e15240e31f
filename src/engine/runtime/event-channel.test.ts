import { describe, expect, it } from "vitest";
import { EventChannel } from "./event-channel.js";

async function drain<T>(channel: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of channel) items.push(item);
  return items;
}

describe("EventChannel", () => {
  it("delivers items pushed before and after the consumer waits, then ends", async () => {
    const channel = new EventChannel<number>();
    channel.push(1, 2);
    const drained = drain(channel);
    await Promise.resolve();
    channel.push(3);
    channel.end();
    channel.push(4);
    expect(await drained).toEqual([1, 2, 3]);
  });

  it("throws the failure after the items that came before it", async () => {
    const channel = new EventChannel<number>();
    channel.push(1);
    channel.fail(new Error("boom"));
    const seen: number[] = [];
    const consume = async () => {
      for await (const item of channel) seen.push(item);
    };
    await expect(consume()).rejects.toThrow("boom");
    expect(seen).toEqual([1]);
  });

  it("tells the producer once when the consumer stops early", async () => {
    let abandoned = 0;
    const channel = new EventChannel<number>(() => abandoned++);
    channel.push(1, 2, 3);
    for await (const item of channel) if (item === 1) break;
    channel.push(4);
    channel.end();
    expect(abandoned).toBe(1);
    expect(await drain(channel)).toEqual([]);
  });
});
