import { describe, expect, it } from "vitest";
import { aggregate, bucketIndex, bucketRange } from "./buckets.js";

const at = (iso: string) => Date.parse(iso);

describe("stats buckets", () => {
  it("picks a granularity from the range and caps the number of buckets", () => {
    expect(bucketRange(at("2024-05-01T00:00:00Z"), at("2024-05-01T02:00:00Z"), undefined, "UTC").granularity).toBe(300);
    expect(bucketRange(at("2024-05-01T00:00:00Z"), at("2024-05-02T00:00:00Z"), undefined, "UTC").granularity).toBe(6 * 3600);
    expect(bucketRange(at("2024-05-01T00:00:00Z"), at("2024-05-20T00:00:00Z"), undefined, "UTC").granularity).toBe(86400);
    const capped = bucketRange(at("2024-05-01T00:00:00Z"), at("2024-05-31T00:00:00Z"), 1, "UTC");
    expect(capped.bucketStarts.length).toBeLessThanOrEqual(10_000);
    expect(() => bucketRange(at("2024-05-01T00:00:00Z"), at("2024-06-02T00:00:00Z"), 3600, "UTC")).toThrow(/31 days/);
  });

  it("aligns buckets in the requested time zone", () => {
    const range = bucketRange(at("2024-05-01T10:10:00Z"), at("2024-05-03T00:00:00Z"), 86400, "America/New_York");
    expect(new Date(range.bucketStarts[0]!).toISOString()).toBe("2024-05-01T04:00:00.000Z");
    expect(bucketIndex(range, at("2024-05-02T03:59:59Z"))).toBe(0);
    expect(bucketIndex(range, at("2024-05-02T04:00:00Z"))).toBe(1);
    expect(bucketIndex(range, at("2024-05-03T00:00:00Z"))).toBe(-1);
  });

  it("aggregates with empty-bucket defaults and interpolated percentiles", () => {
    const spec = { metric: "m", aggregations: ["sum", "avg", "min", "max", "count", "count_true", "count_false"] as const, percentiles: [50, 99.5] };
    const values = aggregate([1, 0, 1, null, 4], { ...spec, aggregations: [...spec.aggregations] });
    expect(values["p99.5_m"]).toBeCloseTo(3.955);
    expect(values).toEqual({
      sum_m: 6,
      avg_m: 1.5,
      min_m: 0,
      max_m: 4,
      count_m: 4,
      count_true_m: 2,
      count_false_m: 1,
      p50_m: 1,
      "p99.5_m": expect.any(Number),
    });
    expect(aggregate([], { ...spec, aggregations: [...spec.aggregations] })).toMatchObject({ sum_m: 0, avg_m: 0, min_m: null, p50_m: null, count_m: 0 });
  });
});
