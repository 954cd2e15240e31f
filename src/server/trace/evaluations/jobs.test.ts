import { describe, expect, it } from "vitest";
import { BackgroundJobs } from "./jobs.js";

const quiet = { error() {} } as never;

describe("background jobs", () => {
  it("aborts running jobs on close and waits until they have recorded it", async () => {
    const jobs = new BackgroundJobs(quiet);
    const recorded: string[] = [];
    jobs.start("waits for the signal", async (signal) => {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
      await new Promise((resolve) => setTimeout(resolve, 5));
      recorded.push("interrupted");
    });
    jobs.start("fails", async () => {
      throw new Error("boom");
    });
    await jobs.close();
    expect(recorded).toEqual(["interrupted"]);
    expect(jobs.signal.aborted).toBe(true);
  });
});
