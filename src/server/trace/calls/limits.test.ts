import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { endOf, startOf, type TraceClient, traceClient } from "../../../testing/trace.js";

const MiB = 1024 * 1024;
const PLACEHOLDER = { _weave: { error: "<EXCEEDS_LIMITS>" } };

describe.each(testDialects)("call size limits on %s", (dialect) => {
  let t: TestApp;
  let alice: TraceClient;
  beforeAll(async () => {
    t = await startTestApp(dialect, { env: { FLYWHEEL_BODY_LIMIT_MB: "16" } });
    alice = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });

  const read = async (id: string) => (await alice.json("/call/read", { project_id: "alice/big", id })).call;

  it("replaces oversized JSON fields with a placeholder and keeps the call and its other fields", async () => {
    await alice.json("/call/start", { start: startOf("alice/big", { id: "s", inputs: { text: "x".repeat(4 * MiB) }, attributes: { keep: "me" } }) });
    const started = await read("s");
    expect(started.inputs).toEqual(PLACEHOLDER);
    expect(started.attributes).toEqual({ keep: "me" });

    // 2 MiB + 2.5 MiB exceed 3.5 MiB together: only the larger field is replaced.
    await alice.json("/call/end", { end: endOf("alice/big", "s", { output: "o".repeat(2 * MiB), summary: { note: "n".repeat(2.5 * MiB) } }) });
    const ended = await read("s");
    expect(ended.output).toHaveLength(2 * MiB);
    expect(ended.summary).toEqual({ ...PLACEHOLDER, weave: { status: "success", latency_ms: 1000, trace_name: "op" } });

    // Multi-byte text is measured in bytes: 1.5 M three-byte characters are 4.5 MiB.
    await alice.json("/call/start", { start: startOf("alice/big", { id: "u", inputs: { text: "€".repeat(1.5 * MiB) } }) });
    expect((await read("u")).inputs).toEqual(PLACEHOLDER);
    await alice.json("/call/start", { start: startOf("alice/big", { id: "small", inputs: { text: "€".repeat(MiB) } }) });
    expect((await read("small")).inputs.text).toHaveLength(MiB);
  });

  it("refuses a call that cannot fit even trimmed, and bodies over the limit, with 413", async () => {
    const huge = await alice.post("/call/end", { end: endOf("alice/big", "e", { exception: "E".repeat(4 * MiB) }) });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().reason).toMatch(/too large/);
    const body = await alice.post("/call/start", { start: startOf("alice/big", { inputs: { text: "x".repeat(17 * MiB) } }) });
    expect(body.statusCode).toBe(413);
    expect(body.json()).toEqual({ reason: "Request body too large" });
  });
});
