import { describe, expect, it } from "vitest";
import { DEFAULT_SCHEDULER_OPTIONS, resolveSchedulerOptions } from "./options.js";

describe("resolveSchedulerOptions", () => {
  it("fills defaults, growing the default step budget to fit the running sequences", () => {
    expect(resolveSchedulerOptions()).toEqual(DEFAULT_SCHEDULER_OPTIONS);
    expect(resolveSchedulerOptions({ maxRunningSequences: 1024, kvCacheBytes: undefined })).toMatchObject({ maxRunningSequences: 1024, maxTokensPerStep: 1024, kvCacheBytes: DEFAULT_SCHEDULER_OPTIONS.kvCacheBytes });
  });

  it("refuses values the scheduler cannot work with", () => {
    expect(() => resolveSchedulerOptions({ maxRunningSequences: 0 })).toThrow(/maxRunningSequences must be a positive integer/);
    expect(() => resolveSchedulerOptions({ kvCacheBytes: 1.5 })).toThrow(/kvCacheBytes/);
    expect(() => resolveSchedulerOptions({ prefixCacheBytes: -1 })).toThrow(/prefixCacheBytes/);
    expect(() => resolveSchedulerOptions({ maxRunningSequences: 8, maxTokensPerStep: 4 })).toThrow(/must be at least maxRunningSequences/);
  });
});
