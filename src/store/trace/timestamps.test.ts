import { describe, expect, it } from "vitest";
import { canonicalTimestamp, millisBetween } from "./timestamps.js";

describe("trace timestamps", () => {
  it("canonicalises ISO text with any zone and precision to UTC microseconds", () => {
    expect(canonicalTimestamp("2024-05-01T12:00:00Z")).toBe("2024-05-01T12:00:00.000000Z");
    expect(canonicalTimestamp("2024-05-01T12:00:00.123456789Z")).toBe("2024-05-01T12:00:00.123456Z");
    expect(canonicalTimestamp("2024-05-01T14:30:00.5+02:30")).toBe("2024-05-01T12:00:00.500000Z");
    expect(canonicalTimestamp("2024-05-01 12:00:00.000001")).toBe("2024-05-01T12:00:00.000001Z");
    expect(canonicalTimestamp("2024-05-01")).toBe("2024-05-01T00:00:00.000000Z");
    expect(canonicalTimestamp("0050-01-01T00:00:00Z")).toBe("0050-01-01T00:00:00.000000Z");
  });

  it("reads numbers as Unix seconds, or milliseconds when large", () => {
    expect(canonicalTimestamp(1714564800)).toBe("2024-05-01T12:00:00.000000Z");
    expect(canonicalTimestamp(1714564800.25)).toBe("2024-05-01T12:00:00.250000Z");
    expect(canonicalTimestamp(1714564800123)).toBe("2024-05-01T12:00:00.123000Z");
  });

  it("refuses what is not a time", () => {
    for (const value of ["yesterday", "2024-02-30T00:00:00Z", "2024-05-01T25:00:00Z", "", null, {}, Number.NaN, 1e20]) {
      expect(canonicalTimestamp(value), String(value)).toBeUndefined();
    }
  });

  it("measures whole milliseconds, truncating microseconds", () => {
    expect(millisBetween("2024-05-01T12:00:00.000000Z", "2024-05-01T12:00:01.500999Z")).toBe(1500);
    expect(millisBetween("2024-05-01T12:00:00.000900Z", "2024-05-01T12:00:00.001000Z")).toBe(0);
  });
});
