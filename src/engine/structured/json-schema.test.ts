import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { acceptsText } from "../../testing/constrained-walk.js";
import { unsupportedJsonSchemaFeature, withoutAdditionalProperties, xgrammarReadySchema } from "./json-schema.js";
import { StructuredOutputs } from "./structured-outputs.js";

describe("unsupportedJsonSchemaFeature", () => {
  it.each([
    [{ type: "integer", multipleOf: 3 }, "`multipleOf` at #"],
    [{ type: "object", properties: { a: { type: "array", uniqueItems: true } } }, "`uniqueItems` at #/properties/a"],
    [{ not: { type: "string" } }, "`not` at #"],
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keywords
    [{ if: { type: "string" }, then: { minLength: 1 } }, "`if` at #"],
    [{ type: "string", format: "credit-card" }, 'format "credit-card" at #'],
    [{ type: "string", pattern: "^a", maxLength: 3 }, "`pattern`/`format` together with `minLength`/`maxLength` at #"],
    [{ allOf: [{ type: "integer" }, { minimum: 1 }] }, "`allOf` with more than one schema at #"],
    [{ $ref: "https://example.com/schema" }, "a non-local `$ref`"],
    [{ $ref: "#/$defs/a", minimum: 3, $defs: { a: { type: "integer" } } }, "`minimum` next to `$ref` at #"],
    [{ type: "object", properties: {}, anyOf: [{ required: ["a"] }] }, "`type` next to `anyOf` at #"],
    [{ type: "string", enum: ["a", 1] }, "`type` next to `enum` at #"],
    [{ minLength: 2 }, "`minLength` without a `type` at #"],
    [{ type: "number", minimum: 0 }, "`minimum` on a `number`"],
    [{ type: ["number", "null"], exclusiveMaximum: 1 }, "`exclusiveMaximum` on a `number`"],
    [{ type: "object", propertyNames: { maxLength: 3 }, properties: { a: {} } }, "`propertyNames` together with other property keywords"],
    [{ oneOf: [{ type: "integer" }, { type: "number" }] }, "`oneOf` whose branches may overlap"],
    [{ oneOf: [{ type: "object", properties: { a: { type: "string" } } }, { type: "object" }] }, "`oneOf` whose branches may overlap"],
  ])("refuses %j", (schema, expected) => {
    expect(unsupportedJsonSchemaFeature(schema)).toContain(expected);
  });

  it.each([
    [{ type: "object", properties: { not: { type: "string" }, if: { type: "integer" } }, required: ["not"] }],
    [{ type: "string", enum: ["a", "b"], description: "x" }],
    [{ $ref: "#/$defs/a", description: "annotations may sit next to $ref", $defs: { a: { type: "integer", minimum: 2 } } }],
    [{ anyOf: [{ type: "string", maxLength: 3 }, { type: "null" }], default: null, title: "Optional" }],
    [{ type: "integer", exclusiveMinimum: 0, maximum: 10 }],
    [{ type: "array", items: { type: "string", format: "date" }, minItems: 1 }],
    [{ type: "object", propertyNames: { pattern: "^[a-z]+$" } }],
    [true],
    [{ oneOf: [{ type: "string" }, { type: "integer" }, { type: ["null", "boolean"] }] }],
    [{ oneOf: [{ const: "a" }, { enum: ["b", 1] }] }],
    [
      {
        oneOf: [{ $ref: "#/$defs/cat" }, { $ref: "#/$defs/dog" }],
        $defs: {
          cat: { type: "object", properties: { kind: { const: "cat" }, lives: { type: "integer" } }, required: ["kind"] },
          dog: { type: "object", properties: { kind: { const: "dog" } }, required: ["kind"] },
        },
      },
    ],
  ])("accepts %j", (schema) => {
    expect(unsupportedJsonSchemaFeature(schema)).toBeUndefined();
  });
});

describe("withoutAdditionalProperties", () => {
  it("closes every object schema that says nothing, and leaves the original alone", () => {
    const schema = { type: "object", properties: { a: { type: "object", properties: {} }, b: { type: "object", additionalProperties: true } } };
    expect(withoutAdditionalProperties(schema)).toEqual({
      type: "object",
      properties: { a: { type: "object", properties: {}, additionalProperties: false }, b: { type: "object", additionalProperties: true } },
      additionalProperties: false,
    });
    expect(schema).not.toHaveProperty("additionalProperties");
  });
});

describe("xgrammarReadySchema", () => {
  it("replaces bounded integers with placeholders, keeping the other types of a type list", () => {
    const { schema, substitutions } = xgrammarReadySchema({ type: "object", properties: { a: { type: "integer", minimum: 1, title: "A" }, b: { type: ["integer", "null"], maximum: 3 } } });
    const [first, second] = Object.keys(substitutions);
    expect(schema).toEqual({
      type: "object",
      properties: { a: { title: "A", const: first }, b: { anyOf: [{ const: second }, { type: "null" }] } },
    });
  });

  it("turns string lengths into a pattern", () => {
    const { schema } = xgrammarReadySchema({ type: "string", minLength: 1, maxLength: 4 }) as { schema: Record<string, unknown> };
    expect(schema).not.toHaveProperty("maxLength");
    expect(schema.pattern).toMatch(/\{1,4\}\$$/);
  });
});

describe("schemas as enforced (through xgrammar, byte by byte)", () => {
  const tokenizer = new ByteTokenizer([]);
  const eos = tokenizer.eosTokenId;
  let outputs: StructuredOutputs;
  beforeAll(async () => {
    outputs = await StructuredOutputs.create({ tokenizer });
  });
  afterAll(() => outputs.dispose());

  const accepts = async (schema: Record<string, unknown>, text: string) => acceptsText(await outputs.createMatcher({ kind: "json_schema", schema }), text, eos);

  it.each([
    [0, 150],
    [-12, 305],
    [7, undefined],
    [undefined, -7],
    [-5, 5],
    [99, 1000],
    [0, 0],
    [-1000, -999],
    [123, 4567],
  ])("integers from %s to %s, exactly", async (minimum, maximum) => {
    const schema = { type: "integer", ...(minimum === undefined ? {} : { minimum }), ...(maximum === undefined ? {} : { maximum }) };
    const low = (minimum ?? (maximum ?? 0) - 1100) - 40;
    const high = (maximum ?? (minimum ?? 0) + 1100) + 40;
    const wrong: number[] = [];
    for (let n = low; n <= high; n++) {
      const inside = (minimum === undefined || n >= minimum) && (maximum === undefined || n <= maximum);
      if ((await accepts(schema, String(n))) !== inside) wrong.push(n);
    }
    expect(wrong).toEqual([]);
    expect(await accepts(schema, "-0")).toBe(false);
    expect(await accepts(schema, `0${String(Math.abs(minimum ?? 1))}`)).toBe(false);
  });

  it("exclusive bounds, in both drafts' spelling", async () => {
    const draft2020 = { type: "integer", exclusiveMinimum: 2, exclusiveMaximum: 5.5 };
    const draft4 = { type: "integer", minimum: 2, exclusiveMinimum: true, maximum: 5, exclusiveMaximum: true };
    for (const [schema, allowed] of [
      [draft2020, ["3", "4", "5"]],
      [draft4, ["3", "4"]],
    ] as const) {
      for (const n of ["1", "2", "3", "4", "5", "6"]) expect(await accepts(schema, n)).toBe(allowed.includes(n as never));
    }
  });

  it("length-limited strings: valid JSON only, counted in characters", async () => {
    const schema = { type: "string", minLength: 1, maxLength: 3 };
    expect(await accepts(schema, '"abc"')).toBe(true);
    expect(await accepts(schema, '"é😀\\""')).toBe(true);
    expect(await accepts(schema, '"\\u0007"')).toBe(true);
    expect(await accepts(schema, '""')).toBe(false);
    expect(await accepts(schema, '"abcd"')).toBe(false);
    expect(await accepts(schema, '"a\u0007"')).toBe(false); // a raw control character is not JSON
    expect(await accepts(schema, '"a"b"')).toBe(false);
  });

  it("bounded integers next to other types", async () => {
    const schema = { type: "object", properties: { n: { type: ["integer", "null"], minimum: 1, maximum: 3 } }, required: ["n"] };
    expect(await accepts(schema, '{"n": 2}')).toBe(true);
    expect(await accepts(schema, '{"n": null}')).toBe(true);
    expect(await accepts(schema, '{"n": 4}')).toBe(false);
  });
});
