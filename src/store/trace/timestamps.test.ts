import { describe, expect, it } from "vitest";
import { canonicalTimestamp, canonicalUtcText, formatTimestamp, millisBetween, parseTimestamp } from "./timestamps.js";

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

  it("reads the SDKs' UTC form as text exactly as through a date", () => {
    const samples = [
      "2024-05-01T12:00:00Z",
      "2024-05-01T12:00:00.1z",
      "2024-05-01 23:59:59.123456789+00:00",
      "2024-05-01T00:00:00.000-0000",
      "2024-02-29T00:00:00Z",
      "2023-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z",
      "2000-02-29T00:00:00Z",
      "0000-01-01T00:00:00Z",
      "0001-01-01T00:00:00Z",
      "9999-12-31T23:59:59.999999Z",
      "2024-04-31T00:00:00Z",
      "2024-13-01T00:00:00Z",
      "2024-00-10T00:00:00Z",
      "2024-05-00T00:00:00Z",
      "2024-05-01T24:00:00Z",
      "2024-05-01T12:60:00Z",
      "2024-05-01T12:00:60Z",
      "2024-05-01T12:00:00.Z",
    ];
    // Random dates, some of them impossible, with random fractions.
    for (let i = 0; i < 2000; i++) {
      const pad = (n: number, width: number) => String(n).padStart(width, "0");
      const fraction = i % 3 === 0 ? "" : `.${String(Math.floor(Math.random() * 1e9)).slice(0, 1 + (i % 9))}`;
      samples.push(
        `${pad(Math.floor(Math.random() * 10000), 4)}-${pad(Math.floor(Math.random() * 14), 2)}-${pad(Math.floor(Math.random() * 33), 2)}T${pad(Math.floor(Math.random() * 25), 2)}:${pad(Math.floor(Math.random() * 61), 2)}:${pad(Math.floor(Math.random() * 61), 2)}${fraction}${i % 2 ? "Z" : "+00:00"}`,
      );
    }
    let accepted = 0;
    for (const sample of samples) {
      const instant = parseTimestamp(sample);
      const year = instant ? new Date(instant.ms).getUTCFullYear() : 0;
      const expected = instant && year >= 1 && year <= 9999 ? formatTimestamp(instant) : undefined;
      const fast = canonicalUtcText(sample);
      if (fast !== undefined) accepted++;
      expect(fast === undefined ? canonicalTimestamp(sample) : fast, sample).toBe(expected);
    }
    expect(accepted).toBeGreaterThan(100);
    expect(canonicalUtcText("2024-05-01T12:00:00+02:00")).toBeUndefined();
  });

  it("measures whole milliseconds, truncating microseconds", () => {
    expect(millisBetween("2024-05-01T12:00:00.000000Z", "2024-05-01T12:00:01.500999Z")).toBe(1500);
    expect(millisBetween("2024-05-01T12:00:00.000900Z", "2024-05-01T12:00:00.001000Z")).toBe(0);
  });
});
