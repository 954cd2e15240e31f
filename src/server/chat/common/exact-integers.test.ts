import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { keepExactTopLevelIntegers } from "./exact-integers.js";

describe("keepExactTopLevelIntegers", () => {
  const keep = (text: string) => keepExactTopLevelIntegers(JSON.parse(text), text);

  it("replaces top-level integers a double cannot hold by their exact decimal text", () => {
    expect(keep('{"seed": 9223372036854775808, "n": 1}')).toEqual({ seed: "9223372036854775808", n: 1 });
    expect(keep('{"seed": -9223372036854775809}')).toEqual({ seed: "-9223372036854775809" });
    expect(keep('{"seed": 9007199254740991}')).toEqual({ seed: 9007199254740991 });
  });

  it("leaves floats, nested values and non-objects alone", () => {
    expect(keep('{"temperature": 1e300, "nested": {"seed": 9223372036854775808}}')).toEqual({ temperature: 1e300, nested: { seed: 2 ** 63 } });
    expect(keep("[9223372036854775808]")).toEqual([2 ** 63]);
  });
});

describe("chat completions read large integers from the raw JSON text", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp("sqlite");
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (seedLiteral: string) =>
    t.request(t.keys.alice, {
      method: "POST",
      url: "/v1/chat/completions",
      headers: { "content-type": "application/json" },
      payload: `{"model": "test/base", "messages": [{"role": "user", "content": "hi"}], "seed": ${seedLiteral}}`,
    });

  it("rejects a seed outside signed 64-bit even where JavaScript would round it into range", async () => {
    for (const literal of ["9223372036854775808", "9223372036854775809", "-9223372036854775809", "18446744073709551616"]) {
      const res = await post(literal);
      expect(res.statusCode, literal).toBe(422);
      expect(res.json().detail[0], literal).toMatchObject({ loc: ["body", "seed"], type: expect.stringMatching(/^(less|greater)_than_equal$/) });
    }
  });

  it("accepts the int64 extremes (the request then goes on to the engine)", async () => {
    for (const literal of ["9223372036854775807", "-9223372036854775808"]) {
      const res = await post(literal);
      expect(res.statusCode, literal).not.toBe(422);
    }
  });
});
