import { describe, expect, it } from "vitest";
import { XgrammarCallError } from "./errors.js";
import { fatalReason, RecyclingRuntime, XgrammarRuntime } from "./xgrammar.js";

describe("XgrammarRuntime", () => {
  it("loads the module without touching the process's globals", async () => {
    const runtime = await XgrammarRuntime.load();
    const global = globalThis as Record<string, unknown>;
    expect(global.xgrammar).toBeUndefined();
    expect(global.require).toBeUndefined();
    expect(global.__filename).toBeUndefined();
    const grammar = await runtime.api.Grammar.fromEBNF('root ::= "a" | "b"');
    expect(grammar.toString()).toContain("root ::=");
    grammar.dispose();
  });

  it("gives each runtime its own instance", async () => {
    const [first, second] = await Promise.all([XgrammarRuntime.load(), XgrammarRuntime.load()]);
    expect(first.api).not.toBe(second.api);
    expect(first.api.Grammar).not.toBe(second.api.Grammar);
  });

  it("turns an abort into an XgrammarCallError with the reason xgrammar printed, and keeps working", async () => {
    const runtime = await XgrammarRuntime.load();
    const failing = runtime.call((api) => api.Grammar.fromEBNF('root ::= "a" |'));
    await expect(failing).rejects.toBeInstanceOf(XgrammarCallError);
    await expect(failing).rejects.toThrow(/^EBNF parser error at line 1, column \d+: Expect element/);
    expect(runtime.failures).toBe(1);
    await expect(runtime.call((api) => api.Grammar.fromJSONSchema('{"type": 5}'))).rejects.toThrow("Type should be a string");
    const grammar = await runtime.call((api) => api.Grammar.fromEBNF('root ::= "ok"'));
    expect(grammar.toString()).toContain('"ok"');
    grammar.dispose();
    expect(runtime.failures).toBe(2);
  });

  it("attributes each reason to its own call when calls overlap", async () => {
    const runtime = await XgrammarRuntime.load();
    const results = await Promise.allSettled([
      runtime.call((api) => api.Grammar.fromEBNF("root ::= undefined_rule")),
      runtime.call((api) => api.Grammar.fromEBNF('root ::= "fine"')),
      runtime.call((api) => api.Grammar.fromEBNF('other ::= "x"')),
    ]);
    expect(results[0]).toMatchObject({ status: "rejected", reason: { reason: expect.stringContaining('Rule "undefined_rule" is not defined') } });
    expect(results[1]!.status).toBe("fulfilled");
    expect(results[2]).toMatchObject({ status: "rejected", reason: { reason: expect.stringContaining('The root rule with name "root" is not found') } });
  });

  it("passes errors that are not xgrammar's through unchanged", async () => {
    const runtime = await XgrammarRuntime.load();
    const bug = new TypeError("a bug in the caller");
    await expect(
      runtime.call(() => {
        throw bug;
      }),
    ).rejects.toBe(bug);
    expect(runtime.failures).toBe(0);
  });
});

describe("fatalReason", () => {
  it("keeps the message of a FATAL line without the source location or check expression", () => {
    expect(fatalReason("[FATAL] /home/x/xgrammar/cpp/regex_converter.cc:75: Regex parsing error at position 5: The parenthesis is not closed.")).toBe("Regex parsing error at position 5: The parenthesis is not closed.");
    expect(fatalReason('[FATAL] /a b/json_schema_converter.cc:885: Check failed: (schema_obj.at("type").is<std::string>()) is false: Type should be a string')).toBe("Type should be a string");
    expect(fatalReason("[WARNING] /x/grammar_matcher.cc:499: token out of range")).toBeUndefined();
    expect(fatalReason("Aborted()")).toBeUndefined();
  });
});

describe("RecyclingRuntime", () => {
  it("hands out the same runtime until it has failed too often, then a fresh one", async () => {
    const slot = new RecyclingRuntime(2);
    const first = await slot.get();
    expect(await slot.get()).toBe(first);
    for (let i = 0; i < 2; i++) await first.call((api) => api.Grammar.fromEBNF("bad")).catch(() => undefined);
    const second = await slot.get();
    expect(second).not.toBe(first);
    expect(second.failures).toBe(0);
  });
});
