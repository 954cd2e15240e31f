import { describe, expect, it } from "vitest";
import { shortenName } from "./names.js";

// The cases of Weave's shorten_name tests (tests/trace_server/test_opentelemetry.py).
describe("shortenName", () => {
  it("keeps short names and cuts long ones at delimiters", () => {
    expect(shortenName("short", 10)).toBe("short");
    expect(shortenName("abcdefghijklmnopqrstuvwxyz", 10)).toBe("abcdefg...");
    expect(shortenName("part1.part2", 10)).toBe("part1...");
    expect(shortenName("a.b.c", 10)).toBe("a.b.c");
    expect(shortenName("part1.part2.part3", 12)).toBe("part1...");
    expect(shortenName("verylongfirstpart.second", 10)).toBe("verylon...");
    expect(shortenName("part1.part2.part3", 10, "***")).toBe("part1.***");
    expect(shortenName("part1.part2.part3", 10, "")).toBe("part1");
    expect(shortenName("word1 word2 word3", 12)).toBe("word1 ...");
    expect(shortenName("path/to/file", 8)).toBe("path/...");
    expect(shortenName("user.name@example.com", 12)).toBe("user...");
    expect(shortenName("api/endpoint?param=value", 15)).toBe("api/...");
    const dashed = shortenName("part1-part2-part3", 10);
    expect(dashed).toBe("part1-p...");
    expect(shortenName("hello/world.txt", 10, ":1234", false)).toBe("hello:1234");
  });
});
