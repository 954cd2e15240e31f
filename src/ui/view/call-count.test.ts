import { describe, expect, it } from "vitest";
import { callCountLabel, callListLength, isSearchTooShort } from "./call-count.js";

describe("the call list's bounded count", () => {
  it("labels an exact count plainly and a capped one with a plus", () => {
    expect(callCountLabel({ count: 3, has_more: false })).toBe("3 calls");
    expect(callCountLabel({ count: 1000 })).toBe("1,000 calls");
    expect(callCountLabel({ count: 10000, has_more: true })).toBe("10,000+ calls");
  });

  it("sizes the list by an exact count", () => {
    expect(callListLength({ count: 250, has_more: false }, new Map([[2, 50]]), 100)).toBe(250);
  });

  it("grows a capped list one page past the loaded ones until a page comes back short", () => {
    const capped = { count: 1000, has_more: true };
    expect(callListLength(capped, new Map(), 100)).toBe(1000);
    expect(callListLength(capped, new Map([[0, 100]]), 100)).toBe(1000);
    expect(callListLength(capped, new Map([[9, 100]]), 100)).toBe(1100);
    expect(
      callListLength(
        capped,
        new Map([
          [9, 100],
          [10, 100],
        ]),
        100,
      ),
    ).toBe(1200);
    expect(
      callListLength(
        capped,
        new Map([
          [9, 100],
          [10, 100],
          [11, 37],
        ]),
        100,
      ),
    ).toBe(1137);
  });

  it("asks for three characters before a substring search", () => {
    expect(isSearchTooShort(undefined)).toBe(false);
    expect(isSearchTooShort("")).toBe(false);
    expect(isSearchTooShort(" ab ")).toBe(true);
    expect(isSearchTooShort("👍👍")).toBe(true);
    expect(isSearchTooShort("abc")).toBe(false);
  });
});
