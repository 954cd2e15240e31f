import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestStore, type TestStore } from "../../../testing/stores.js";
import { traceDb } from "../call-tables.js";
import { SqlTraceCallStore } from "../trace-store.js";
import { countTrigrams, rarestPart, TrigramSamples } from "./trigram-sample.js";
import type { Operation } from "../query/ast.js";

const documents = Array.from({ length: 200 }, (_, n) => `Question number ${n}: lorem ipsum ${n % 2 === 0 ? "even" : "odd"}`);

describe("the rarest part of a needle", () => {
  const sample = countTrigrams(documents);

  it("counts each trigram once per document, case folded", () => {
    expect(countTrigrams(["Lorem lorem", "LOREM"]).counts.get("lor")).toBe(2);
    expect(sample.counts.get("que")).toBe(200);
  });

  it("is the run whose rarest trigram is rarest, the longer of equals", () => {
    expect(rarestPart("Question number 123456:", sample)).toBe("123456");
    expect(rarestPart("number 77 odd", sample)).toBe("odd");
    expect(rarestPart("lorem ipsum", sample)).toBe("lorem");
    expect(rarestPart("no such text here", sample)).toBe("such");
  });

  it("is the needle itself with one run, or without a sample to go by", () => {
    expect(rarestPart("123456:", sample)).toBe("123456:");
    expect(rarestPart("Question number 123456:", countTrigrams(documents.slice(0, 10)))).toBe("Question number 123456:");
  });
});

describe("a long needle on postgres", () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore("postgres");
  });
  afterAll(async () => {
    await store.close();
  });

  it("is looked up by its rarest part, with the answers of a scan", async () => {
    const P = "e/sample";
    const calls = new SqlTraceCallStore(store);
    await calls.writeCalls(
      documents.map((text, n) => ({
        start: {
          projectId: P,
          id: `c${n}`,
          traceId: `t${n}`,
          opName: "op",
          displayName: null,
          parentId: null,
          threadId: null,
          turnId: null,
          startedAt: `2024-01-01T00:00:${String(n % 60).padStart(2, "0")}.000000Z`,
          attributes: {},
          inputs: { text },
          otelDump: null,
          wbUserId: "u",
          wbRunId: null,
          wbRunStep: null,
        },
      })),
    );
    expect(await new TrigramSamples(traceDb(store.db)).searchPart(P, "Question number 123:")).toBe("123");
    const scanning = new SqlTraceCallStore(store, { useTextIndex: false });
    const whole = new SqlTraceCallStore(store, { searchRarestPart: false });
    for (const needle of ["Question number 123:", "number 12: lorem", "QUESTION NUMBER 7:", "number 199: lorem ipsum odd", "number 198: lorem ipsum odd"]) {
      const query: Operation = { $contains: { input: { $getField: "inputs.text" }, substr: { $literal: needle }, case_insensitive: true } };
      const expected = await calls.countCalls({ projectId: P, query });
      expect(expected, needle).toEqual(await scanning.countCalls({ projectId: P, query }));
      expect(expected, needle).toEqual(await whole.countCalls({ projectId: P, query }));
    }
  });
});
