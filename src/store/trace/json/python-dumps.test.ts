import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { PyFloat, PyInt, parseJsonLossless } from "./lossless.js";
import { compareByCodePoint, pythonJsonDumps, pythonJsonString } from "./python-dumps.js";

const sorted = (value: unknown) => pythonJsonDumps(value, { sortKeys: true });

describe("pythonJsonDumps", () => {
  it("uses Python's separators and sorts keys", () => {
    expect(sorted({ b: [1, 2], a: { y: null, x: true } })).toBe('{"a": {"x": true, "y": null}, "b": [1, 2]}');
    expect(pythonJsonDumps({ b: 1, a: 2 }, { sortKeys: false })).toBe('{"b": 1, "a": 2}');
    expect(sorted({ e: {}, l: [] })).toBe('{"e": {}, "l": []}');
  });

  it("writes ints exactly and floats as repr", () => {
    expect(sorted([0, -7, 9007199254740993n, new PyInt(10n ** 30n), 1.5, new PyFloat(2), new PyFloat(1e16), 1e-5])).toBe(
      "[0, -7, 9007199254740993, 1000000000000000000000000000000, 1.5, 2.0, 1e+16, 1e-05]",
    );
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
    expect(sorted({ "😀": 1, "Ａ": 2 })).toBe('{"\\uff21": 2, "\\ud83d\\ude00": 1}');
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
