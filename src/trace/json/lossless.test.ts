import { describe, expect, it } from "vitest";
import { PyFloat, PyInt } from "../../python-format.js";
import { parseJsonLossless, stringifyJsonLossless } from "./lossless.js";

describe("parseJsonLossless", () => {
  it("keeps floats with an integral value apart from ints", () => {
    const value = parseJsonLossless('{"int": 1, "float": 1.0, "exp": 1e3, "neg0": -0.0, "frac": 0.5}') as Record<string, unknown>;
    expect(value.int).toBe(1);
    expect(value.float).toBeInstanceOf(PyFloat);
    expect((value.float as PyFloat).value).toBe(1);
    expect(value.exp).toBeInstanceOf(PyFloat);
    expect(Object.is((value.neg0 as PyFloat).value, -0)).toBe(true);
    expect(value.frac).toBe(0.5);
  });

  it("keeps every digit of integers beyond 2^53", () => {
    const value = parseJsonLossless("[9007199254740991, 9007199254740993, -123456789012345678901234567890, -0]") as unknown[];
    expect(value[0]).toBe(9007199254740991);
    expect((value[1] as PyInt).value).toBe(9007199254740993n);
    expect((value[2] as PyInt).value).toBe(-123456789012345678901234567890n);
    expect(Object.is(value[3], 0)).toBe(true);
  });

  it("accepts Python's NaN and Infinity tokens", () => {
    const value = parseJsonLossless("[NaN, Infinity, -Infinity, 1e400]") as PyFloat[];
    expect(Number.isNaN(value[0]?.value)).toBe(true);
    expect(value.slice(1).map((item) => item.value)).toEqual([Infinity, -Infinity, Infinity]);
  });

  it("decodes strings, escapes and a __proto__ key like JSON.parse", () => {
    const text = '{"a": "caf\\u00e9 \\ud83d\\ude00 \\n", "__proto__": {"x": 1}, "e": "", "nested": [[], {}]}';
    const value = parseJsonLossless(text) as Record<string, unknown>;
    expect(value).toEqual(JSON.parse(text));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toContain("__proto__");
  });

  it.each(["", "{", '{"a" 1}', "[1,]", "01", '"raw\ncontrol"', "tru", '{"a": 1} x', "[1 2]"])("rejects malformed JSON %j", (text) => {
    expect(() => parseJsonLossless(text)).toThrow(SyntaxError);
  });

  it("rejects absurd nesting instead of overflowing the stack", () => {
    expect(() => parseJsonLossless("[".repeat(100_000))).toThrow(/nested too deeply/);
  });
});

describe("stringifyJsonLossless", () => {
  it("writes wrapped numbers as their exact tokens and everything else as JSON.stringify does", () => {
    const value = parseJsonLossless('{"f": 1.0, "big": 12345678901234567890, "s": "1.0", "list": [2.0, 3], "sci": 1e+100}');
    expect(stringifyJsonLossless(value)).toBe('{"f":1.0,"big":12345678901234567890,"s":"1.0","list":[2.0,3],"sci":1e+100}');
    expect(stringifyJsonLossless({ plain: [1, "x", null, true] })).toBe(JSON.stringify({ plain: [1, "x", null, true] }));
  });

  it("writes non-finite floats as null, since JSON has no token for them", () => {
    expect(stringifyJsonLossless([new PyFloat(Number.NaN), new PyFloat(Infinity)])).toBe("[null,null]");
  });

  it("does not mistake user strings for its placeholders", () => {
    const tricky = { s: "@pyjson-0000:1.0@", t: '"@' };
    expect(JSON.parse(stringifyJsonLossless({ ...tricky, f: new PyFloat(2) }))).toEqual({ ...tricky, f: 2 });
  });

  it("degrades to plain numbers under JSON.stringify", () => {
    expect(JSON.stringify([new PyFloat(1), new PyInt(2n ** 64n)])).toBe("[1,18446744073709552000]");
  });
});
