import { describe, expect, it } from "vitest";
import { UpdateChannel } from "./update-channel.js";

describe("UpdateChannel", () => {
  it("delivers values pushed before and while the reader waits, then ends", async () => {
    const channel = new UpdateChannel<number>();
    channel.push(1);
    const read = (async () => {
      const values: number[] = [];
      for await (const value of channel) values.push(value);
      return values;
    })();
    await new Promise((resolve) => setImmediate(resolve));
    channel.push(2);
    channel.end();
    channel.push(3); // after the end: dropped
    expect(await read).toEqual([1, 2]);
  });

  it("delivers what was pushed before a failure, then throws it", async () => {
    const channel = new UpdateChannel<string>();
    channel.push("a");
    channel.fail(new Error("boom"));
    channel.end();
    const values: string[] = [];
    await expect(
      (async () => {
        for await (const value of channel) values.push(value);
      })(),
    ).rejects.toThrow("boom");
    expect(values).toEqual(["a"]);
    expect(channel.closed).toBe(true);
  });
});
