import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillText } from "../../migrations/008-trace-search.js";
import { openTestStore, type TestStore, testDialects } from "../../../testing/stores.js";
import type { Operation } from "../query/ast.js";
import { traceDb } from "../call-tables.js";
import { SqlTraceCallStore } from "../trace-store.js";
import { containsPattern, jsonSearchText, searchableNeedle, trigramQuery } from "./text-index.js";
import { indexedNeedleSets, textCandidates } from "./text-query.js";
import type { CallWrite } from "./types.js";

const P = "e/text";

/** Texts that case folding, LIKE wildcards, quoting and JSON escaping treat in interesting ways. */
const TEXTS = [
  "Hello World",
  "HELLO there",
  "héllo ÉCOLE école",
  "100% sure",
  "1000 percent",
  "a_b_c",
  "axbxc",
  "it's",
  'say "hi" now',
  "back\\slash",
  "tab\there\nnewline",
  "emoji 😀 text",
  "ΣΊΣΥΦΟΣ σίσυφος",
  "İstanbul ISTANBUL",
  "straße STRASSE",
  "K-kelvin",
  '{"not": "json"}',
  "",
];
const NEEDLES = [
  "hello",
  "HeLLo",
  "llo",
  "lo",
  "o",
  "",
  "%",
  "100%",
  "0%",
  "_",
  "a_b",
  "b_c",
  "'",
  "it's",
  '"hi"',
  '"',
  '""',
  "\\",
  "back\\sl",
  "\\s",
  "\t",
  "e\nn",
  "😀 t",
  "😀",
  "école",
  "ÉCOLE",
  "éco",
  "ÉCO",
  "σίσ",
  "ΣΊΣ",
  "İst",
  "ist",
  "straße",
  "STRASSE",
  "ß",
  "K-k",
  "k-k",
  '{"',
  '":',
  "not",
  "xyz-absent",
  "%%%",
  "__",
  "hello world",
  "Question",
];

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x100000000;
  };
}

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)]!;
}

function randomPayload(next: () => number): unknown {
  const roll = next();
  if (roll < 0.15) return pick(next, TEXTS);
  if (roll < 0.2) return [pick(next, TEXTS), 7];
  if (roll < 0.25) return 42;
  return { text: pick(next, TEXTS), n: Math.floor(next() * 1000), deep: { x: pick(next, TEXTS), list: [pick(next, TEXTS)] } };
}

const FIELDS = [
  "op_name",
  "display_name",
  "inputs",
  "inputs.text",
  "inputs.deep.x",
  "inputs.deep",
  "inputs.deep.list.0",
  "output",
  "output.text",
  "output.0",
  "output.deep.list",
  "summary.weave.trace_name",
  "attributes.note",
  "exception",
];
const UI_FIELDS = ["op_name", "display_name", "inputs", "output"];

function contains(field: string, needle: string, caseInsensitive: boolean): Operation {
  return { $contains: { input: { $getField: field }, substr: { $literal: needle }, case_insensitive: caseInsensitive } };
}

function randomOperation(next: () => number): Operation {
  const needle = pick(next, NEEDLES);
  const insensitive = next() < 0.7;
  const roll = next();
  // The trace list's search: one needle over four fields.
  if (roll < 0.35) return { $or: UI_FIELDS.map((field) => contains(field, needle, insensitive)) };
  if (roll < 0.45) return { $and: [{ $or: UI_FIELDS.map((field) => contains(field, needle, true)) }, { $eq: [{ $getField: "summary.weave.status" }, { $literal: "success" }] }] };
  if (roll < 0.5) return { $not: [contains(pick(next, FIELDS), needle, insensitive)] };
  if (roll < 0.6) return { $and: [contains(pick(next, FIELDS), needle, insensitive), contains(pick(next, FIELDS), pick(next, NEEDLES), insensitive)] };
  return contains(pick(next, FIELDS), needle, insensitive);
}

describe("text index documents and look-ups", () => {
  it("adds unescaped strings only to text that has escapes", () => {
    expect(jsonSearchText('{"a":"plain"}')).toBe('{"a":"plain"}');
    expect(jsonSearchText('{"a":"say \\"hi\\"","b":["x\\\\y"]}')).toBe('{"a":"say \\"hi\\"","b":["x\\\\y"]}\nsay "hi"\nx\\y');
    expect(jsonSearchText(null)).toBe("");
    // PostgreSQL text cannot hold NUL: it splits the unescaped strings, and such needles are never looked up.
    expect(jsonSearchText('{"a":"x\\u0000y"}')).toBe('{"a":"x\\u0000y"}\nx\ny');
    expect(searchableNeedle("sqlite", "x\u0000y")).toBe(false);
  });

  it("asks for trigrams of the needle, quoted, and escapes LIKE wildcards", () => {
    expect(trigramQuery("abcd")).toBe('"abc" AND "bcd"');
    expect(trigramQuery('a"bc')).toBe('"a""b" AND """bc"');
    expect(trigramQuery("😀ab")).toBe('"😀ab"');
    expect(trigramQuery(`${"x".repeat(5)}abcdefghijklmnopqrstuvwxyz`).split(" AND ")).toHaveLength(12);
    expect(containsPattern("100%_a\\b")).toBe("%100\\%\\_a\\\\b%");
  });

  it("leaves short needles and other operations to the scan", () => {
    expect(searchableNeedle("sqlite", "ab")).toBe(false);
    expect(searchableNeedle("sqlite", "😀ab")).toBe(true);
    expect(searchableNeedle("postgres", "%%%")).toBe(false);
    expect(searchableNeedle("postgres", "a-b-c")).toBe(false);
    expect(searchableNeedle("postgres", "x abc")).toBe(true);
    expect(indexedNeedleSets("sqlite", { $or: [contains("inputs", "abc", true), contains("output", "xyz", false)] })).toEqual([["abc", "xyz"]]);
    expect(indexedNeedleSets("sqlite", { $or: [contains("inputs", "abc", true), contains("attributes", "xyz", false)] })).toEqual([]);
    expect(indexedNeedleSets("sqlite", { $not: [contains("inputs", "abc", true)] })).toEqual([]);
    expect(indexedNeedleSets("sqlite", { $and: [contains("inputs.a.b", "abc", true), contains("op_name", "ab", true)] })).toEqual([["abc"]]);
  });
});

describe.each(testDialects)("text index on %s", (dialect) => {
  let store: TestStore;
  let indexed: SqlTraceCallStore;
  let scanning: SqlTraceCallStore;
  const ids = async (calls: SqlTraceCallStore, query: Operation, limit?: number) => {
    const out: string[] = [];
    for await (const page of calls.queryCalls({ projectId: P, query, columns: ["id"], limit, sortBy: [{ field: "started_at", direction: "desc" }] })) out.push(...page.map((call) => call.id));
    return out;
  };

  beforeAll(async () => {
    store = await openTestStore(dialect);
    indexed = new SqlTraceCallStore(store);
    scanning = new SqlTraceCallStore(store, { useLeafIndex: false, useTextIndex: false });
    const next = random(5);
    const writes: CallWrite[] = [];
    for (let i = 0; i < 240; i++) {
      const id = `c${String(i).padStart(3, "0")}`;
      const startedAt = new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString().replace("Z", "000Z");
      const opName = next() < 0.5 ? `weave:///${P}/op/${pick(next, ["Hello", "search_docs", "100%-op", "straße"])}:abc` : pick(next, ["plain-op", "Question answer"]);
      const start = {
        projectId: P,
        id,
        traceId: `t${i}`,
        opName,
        displayName: next() < 0.3 ? pick(next, TEXTS) : null,
        parentId: null,
        threadId: null,
        turnId: null,
        startedAt,
        attributes: { note: pick(next, TEXTS) },
        inputs: randomPayload(next) as Record<string, unknown>,
        otelDump: null,
        wbUserId: "u",
        wbRunId: null,
        wbRunStep: null,
      };
      const end = { projectId: P, id, traceId: null, endedAt: "2024-06-01T00:00:00.000000Z", exception: next() < 0.2 ? pick(next, TEXTS) : null, output: randomPayload(next), summary: {}, wbRunStepEnd: null };
      // Complete calls, starts alone, ends before their starts, and starts sent again.
      if (i % 5 === 0) writes.push({ start });
      else if (i % 7 === 0) {
        await indexed.writeCalls([{ end }]);
        writes.push({ start });
      } else writes.push({ start, end });
      if (i % 11 === 0) writes.push({ start: { ...start, inputs: { text: "replaced Hello" } } });
    }
    await indexed.writeCalls(writes);
    await indexed.updateDisplayName(P, "c003", "Renamed ÉCOLE 100%");
    await indexed.deleteCalls(P, ["c004"]);
    // Another project's calls never answer this one's searches.
    await indexed.writeCalls([
      {
        start: {
          projectId: "e/other",
          id: "o1",
          traceId: "t",
          opName: "Hello",
          displayName: null,
          parentId: null,
          threadId: null,
          turnId: null,
          startedAt: "2024-01-01T00:00:00.000000Z",
          attributes: {},
          inputs: { text: "Hello" },
          otelDump: null,
          wbUserId: "u",
          wbRunId: null,
          wbRunStep: null,
        },
      },
    ]);
  });
  afterAll(async () => {
    await store.close();
  });

  it("returns exactly what reading every call returns, for every needle over the trace list's fields", async () => {
    let narrowed = 0;
    for (const needle of NEEDLES) {
      for (const insensitive of [true, false]) {
        const query: Operation = { $or: UI_FIELDS.map((field) => contains(field, needle, insensitive)) };
        const expected = await ids(scanning, query);
        expect(await ids(indexed, query), JSON.stringify(query)).toEqual(expected);
        expect(await indexed.countCalls({ projectId: P, query })).toEqual(await scanning.countCalls({ projectId: P, query }));
        // The web UI counts up to a cap (query_stats `limit`): capped counts agree too.
        expect(await indexed.countCalls({ projectId: P, query }, 3)).toEqual(await scanning.countCalls({ projectId: P, query }, 3));
        if ((await textCandidates(traceDb(store.db), dialect, P, query, 10_000)) !== undefined) narrowed++;
      }
    }
    expect(narrowed).toBeGreaterThan(20);
  });

  it("returns exactly what reading every call returns, for random searches", async () => {
    const next = random(17);
    let narrowed = 0;
    for (let i = 0; i < 250; i++) {
      const query = randomOperation(next);
      expect(await ids(indexed, query), JSON.stringify(query)).toEqual(await ids(scanning, query));
      expect(await ids(indexed, query, 3), JSON.stringify(query)).toEqual(await ids(scanning, query, 3));
      if ((await textCandidates(traceDb(store.db), dialect, P, query, 10_000)) !== undefined) narrowed++;
    }
    expect(narrowed).toBeGreaterThan(60);
  });

  it("finds a renamed call by its new name, and the other project's call never", async () => {
    const query = contains("display_name", "renamed école", true);
    expect(await ids(indexed, query)).toEqual(dialect === "postgres" ? await ids(scanning, query) : []);
    expect(await ids(indexed, contains("display_name", "RENAMED", true))).toEqual(["c003"]);
    const hello = await textCandidates(traceDb(store.db), dialect, P, contains("inputs", "Hello", true), 10_000);
    expect(hello).toBeDefined();
    expect(hello).not.toContain("o1");
  });

  it("is rebuilt from the stored calls by the migration's fill", async () => {
    const db = traceDb(store.db);
    await (dialect === "sqlite" ? sql`INSERT INTO trace_call_text (trace_call_text) VALUES ('delete-all')` : sql`DELETE FROM trace_call_text`).execute(db);
    await fillText(store.db);
    const next = random(23);
    const fresh = new SqlTraceCallStore(store);
    for (let i = 0; i < 80; i++) {
      const query = randomOperation(next);
      expect(await ids(fresh, query), JSON.stringify(query)).toEqual(await ids(scanning, query));
    }
  });
});
