import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { compareByCodePoint, PyFloat, PyInt, pythonFloatRepr, pythonJsonDumps, pythonJsonString, pythonRepr, pythonSetRepr, pythonStr } from "./python-format.js";
import { parseJsonLossless } from "./trace/json/lossless.js";

const sorted = (value: unknown) => pythonJsonDumps(value, { sortKeys: true });

describe("pythonJsonDumps", () => {
  it("uses Python's separators and sorts keys", () => {
    expect(sorted({ b: [1, 2], a: { y: null, x: true } })).toBe('{"a": {"x": true, "y": null}, "b": [1, 2]}');
    expect(pythonJsonDumps({ b: 1, a: 2 }, { sortKeys: false })).toBe('{"b": 1, "a": 2}');
    expect(sorted({ e: {}, l: [] })).toBe('{"e": {}, "l": []}');
  });

  it("writes ints exactly and floats as repr", () => {
    expect(sorted([0, -7, 9007199254740993n, new PyInt(10n ** 30n), 1.5, new PyFloat(2), new PyFloat(1e16), 1e-5])).toBe("[0, -7, 9007199254740993, 1000000000000000000000000000000, 1.5, 2.0, 1e+16, 1e-05]");
    expect(sorted([new PyFloat(Number.NaN), new PyFloat(Infinity), new PyFloat(-Infinity)])).toBe("[NaN, Infinity, -Infinity]");
  });

  it("escapes like ensure_ascii=True", () => {
    expect(pythonJsonString("plain text ~")).toBe('"plain text ~"');
    expect(pythonJsonString('q"b\\s/')).toBe('"q\\"b\\\\s/"');
    expect(pythonJsonString("\n\r\t\b\f\u0000\u001f\u007f")).toBe('"\\n\\r\\t\\b\\f\\u0000\\u001f\\u007f"');
    expect(pythonJsonString("café ÿ Ā")).toBe('"caf\\u00e9 \\u00ff \\u0100"');
    expect(pythonJsonString("😀")).toBe('"\\ud83d\\ude00"');
    expect(pythonJsonString("中")).toBe('"\\u4e2d"');
  });

  it("orders keys by code point, not by UTF-16 unit", () => {
    // U+FF21 sorts after U+1F600 in UTF-16 (0xFF21 > 0xD83D) but before it by code point.
    const keys = ["😀", "Ａ", "a", "Z", ""];
    expect([...keys].sort(compareByCodePoint)).toEqual(["", "Z", "a", "Ａ", "😀"]);
    expect(sorted({ "😀": 1, Ａ: 2 })).toBe('{"\\uff21": 2, "\\ud83d\\ude00": 1}');
  });

  it("leaves out undefined properties and rejects what JSON cannot hold", () => {
    expect(sorted({ a: undefined, b: 1 })).toBe('{"b": 1}');
    expect(() => sorted({ f: () => 1 })).toThrow(TypeError);
  });
});

const hasPython = spawnSync("python3", ["-c", "import json"], { encoding: "utf8" }).status === 0;

// Random JSON documents with every hard case (floats of all magnitudes, integral floats, big ints,
// control, non-ASCII and astral characters in keys and values); CPython dumps each one.
const CORPUS_SCRIPT = String.raw`
import json, random, struct
random.seed(7)
def rfloat():
    k = random.random()
    if k < 0.3: return struct.unpack('d', struct.pack('Q', random.getrandbits(64)))[0]
    if k < 0.5: return float(random.randint(-10**20, 10**20))
    if k < 0.7: return random.uniform(-1e-3, 1e-3)
    if k < 0.8: return random.choice([0.0, -0.0, 1e16, 1e15, 1e-4, 1e-5, 0.1, 1.5, float('nan'), float('inf'), -float('inf'), 5e-324])
    return random.random() * 10 ** random.randint(-30, 30)
def rstr():
    out = []
    for _ in range(random.randint(0, 6)):
        k = random.random()
        if k < 0.5: out.append(chr(random.randint(32, 126)))
        elif k < 0.65: out.append(chr(random.randint(0, 31)))
        elif k < 0.85: out.append(chr(random.choice([random.randint(0x80, 0xd7ff), random.randint(0xe000, 0xffff)])))
        else: out.append(chr(random.randint(0x10000, 0x10ffff)))
    return ''.join(out)
def rval(depth=0):
    k = random.random()
    if depth > 3 or k < 0.5:
        return random.choice([None, True, False, rfloat(), random.randint(-2**70, 2**70), random.randint(-99, 99), rstr()])
    if k < 0.75: return [rval(depth + 1) for _ in range(random.randint(0, 4))]
    return {rstr(): rval(depth + 1) for _ in range(random.randint(0, 4))}
cases = []
for _ in range(400):
    v = {"v": rval()}
    cases.append([json.dumps(v, ensure_ascii=False), json.dumps(v, sort_keys=True)])
print(json.dumps(cases))
`;

describe.skipIf(!hasPython)("agreement with CPython's json module", () => {
  it("produces the same sorted dump for every document of a random corpus", () => {
    const run = spawnSync("python3", ["-c", CORPUS_SCRIPT], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    expect(run.status).toBe(0);
    const cases = JSON.parse(run.stdout) as [string, string][];
    expect(cases).toHaveLength(400);
    const mismatches = cases.filter(([source, expected]) => sorted(parseJsonLossless(source)) !== expected);
    expect(mismatches.slice(0, 3)).toEqual([]);
  });
});

describe("pythonFloatRepr", () => {
  // Expected strings are what CPython's repr() prints for each value.
  it.each([
    [1, "1.0"],
    [-0, "-0.0"],
    [0.1, "0.1"],
    [1e16, "1e+16"],
    [1e15, "1000000000000000.0"],
    [123456789012345680, "1.2345678901234568e+17"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [1.5e-7, "1.5e-07"],
    [1e100, "1e+100"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [-2.5, "-2.5"],
    [1234.5678, "1234.5678"],
    [Number.NaN, "NaN"],
    [Infinity, "Infinity"],
    [-Infinity, "-Infinity"],
  ])("repr(%s) is %s", (value, expected) => {
    expect(pythonFloatRepr(value)).toBe(expected);
  });
});

describe("pythonRepr and pythonStr", () => {
  // Expected strings are what CPython's repr() and str() print for the same values.
  it("prints None, booleans, ints and floats as Python does", () => {
    expect([null, undefined, true, false, 3, 0.5, new PyFloat(2), new PyInt(10n ** 20n)].map((value) => pythonRepr(value))).toEqual(["None", "None", "True", "False", "3", "0.5", "2.0", "100000000000000000000"]);
    expect([Number.NaN, Infinity, -Infinity, new PyFloat(Number.NaN)].map((value) => pythonRepr(value))).toEqual(["nan", "inf", "-inf", "nan"]);
  });

  it("prints every number as a float when asked (a parameter Python holds as float)", () => {
    expect(pythonStr(3, { float: true })).toBe("3.0");
    expect(pythonStr([1, 2], { float: true })).toBe("[1.0, 2.0]");
    expect(pythonStr(1e-5, { float: true })).toBe("1e-05");
    expect(pythonStr(3)).toBe("3");
  });

  it("quotes strings as repr does and leaves them bare in str", () => {
    expect(pythonRepr("plain")).toBe("'plain'");
    expect(pythonRepr("it's")).toBe(`"it's"`);
    expect(pythonRepr(`it's "so"`)).toBe(`'it\\'s "so"'`);
    expect(pythonRepr("a\\b\n\t\u0001")).toBe("'a\\\\b\\n\\t\\x01'");
    expect(pythonStr("it's")).toBe("it's");
    expect(pythonStr({ k: ["v", 1] })).toBe("{'k': ['v', 1]}");
  });

  it("prints sets of strings", () => {
    expect(pythonSetRepr([])).toBe("set()");
    expect(pythonSetRepr(["a", "b"])).toBe("{'a', 'b'}");
  });
});

describe("pythonJsonDumps with ensure_ascii=False", () => {
  it("keeps non-ASCII text and escapes only quotes, backslashes and controls", () => {
    expect(pythonJsonDumps({ é: ["中", 'q"\\', "\n"] }, { ensureAscii: false })).toBe('{"é": ["中", "q\\"\\\\", "\\n"]}');
    expect(pythonJsonDumps({ b: 1.5, a: 1e-7 }, { ensureAscii: false })).toBe('{"b": 1.5, "a": 1e-07}');
  });
});
