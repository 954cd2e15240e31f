import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { bytesDigest, isContentDigest, objectDigestOf, rowDigestOf, tableDigestOf, versionIndexOf } from "./digest.js";
import { parseJsonLossless } from "./json/lossless.js";

/**
 * Test vectors built from the algorithm's description (`docs/api/trace.md#digests`), independently of the
 * code under test: the canonical text is written out by hand as Python's json.dumps(sort_keys=True)
 * prints it, then hashed with sha256 → base64url → `-`→X, `_`→Y, no padding.
 */
function weaveDigestOfText(canonical: string | Buffer): string {
  const base64 = createHash("sha256").update(canonical).digest("base64");
  return base64.replace(/\+/g, "X").replace(/\//g, "Y").replace(/=+$/, "");
}

describe("object digests", () => {
  it.each([
    ["key order and separators", '{"b": 1, "a": [1, 2]}', '{"a": [1, 2], "b": 1}'],
    ["integral floats stay floats", '{"x": 1.0, "y": 1, "z": -0.0}', '{"x": 1.0, "y": 1, "z": -0.0}'],
    ["float repr thresholds", '{"a": 1e16, "b": 1e15, "c": 0.00001, "d": 0.0001, "e": 2.5e-7}', '{"a": 1e+16, "b": 1000000000000000.0, "c": 1e-05, "d": 0.0001, "e": 2.5e-07}'],
    ["large integers keep every digit", '{"n": 123456789012345678901234567890, "m": -9007199254740993}', '{"m": -9007199254740993, "n": 123456789012345678901234567890}'],
    ["non-ASCII text is escaped", '{"t": "héllo 中文 😀", "k\u00e9y": "\\u0001"}', '{"k\\u00e9y": "\\u0001", "t": "h\\u00e9llo \\u4e2d\\u6587 \\ud83d\\ude00"}'],
    ["keys sort by code point", '{"😀": 1, "ｚ": 2, "z": 3}', '{"z": 3, "\\uff5a": 2, "\\ud83d\\ude00": 1}'],
    ["NaN and infinities are bare words", '{"a": NaN, "b": -Infinity}', '{"a": NaN, "b": -Infinity}'],
    ["scalars and empty containers", '[null, true, false, "", {}, []]', '[null, true, false, "", {}, []]'],
  ])("%s", (_name, requestJson, canonical) => {
    const computed = objectDigestOf(parseJsonLossless(requestJson));
    expect(computed.canonicalJson).toBe(canonical);
    expect(computed.digest).toBe(weaveDigestOfText(canonical));
    expect(computed.digest).toMatch(/^[A-Za-z0-9]{43}$/);
  });

  it("hashes a published Weave object with its class markers and reports its classes", () => {
    const val = parseJsonLossless('{"_type": "StringPrompt", "_class_name": "StringPrompt", "_bases": ["Prompt", "Object", "BaseModel"], "content": "Hi {name}", "temperature": 0.0}');
    const computed = objectDigestOf(val);
    const canonical = '{"_bases": ["Prompt", "Object", "BaseModel"], "_class_name": "StringPrompt", "_type": "StringPrompt", "content": "Hi {name}", "temperature": 0.0}';
    expect(computed.digest).toBe(weaveDigestOfText(canonical));
    expect(computed).toMatchObject({ baseObjectClass: "Prompt", leafObjectClass: "StringPrompt", kind: "object" });
  });
});

describe("row, table and file digests", () => {
  it("row digests are object digests of the row dict", () => {
    const row = parseJsonLossless('{"question": "2+2?", "answer": 4.0}') as Record<string, unknown>;
    expect(rowDigestOf(row)).toBe(weaveDigestOfText('{"answer": 4.0, "question": "2+2?"}'));
  });

  it("a table digest is the sha256 hex of its row digests concatenated in order", () => {
    const rows = [weaveDigestOfText('{"a": 1}'), weaveDigestOfText('{"a": 2}')];
    expect(tableDigestOf(rows)).toBe(createHash("sha256").update(rows.join("")).digest("hex"));
    expect(tableDigestOf([...rows].reverse())).not.toBe(tableDigestOf(rows));
    expect(tableDigestOf([])).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("file digests hash the raw bytes", () => {
    const bytes = Buffer.from([0, 255, 10, 13, 128]);
    expect(bytesDigest(bytes)).toBe(weaveDigestOfText(bytes));
    expect(bytesDigest("")).toBe(weaveDigestOfText(""));
  });
});

describe("digest-like strings", () => {
  it("recognises content digests", () => {
    expect(isContentDigest(weaveDigestOfText("x"))).toBe(true);
    expect(isContentDigest("a".repeat(64))).toBe(true);
    expect(isContentDigest("production")).toBe(false);
    expect(isContentDigest("latest")).toBe(false);
  });

  it("reads v<N> selectors", () => {
    expect(versionIndexOf("v0")).toBe(0);
    expect(versionIndexOf("v12")).toBe(12);
    expect(versionIndexOf("v")).toBeUndefined();
    expect(versionIndexOf("v1a")).toBeUndefined();
    expect(versionIndexOf("latest")).toBeUndefined();
  });
});
