import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { encodeOtlp, otlpJson, type TestResourceSpans } from "../../../testing/otlp.js";
import { testDialects } from "../../../testing/stores.js";
import { type TraceClient, traceClient } from "../../../testing/trace.js";

const TRACE = "0af7651916cd43dd8448eb211c80319c";
const ROOT = "b7ad6b7169203331";
const CHILD = "00f067aa0ba902b7";
const EVENTS = "1111111111111111";
const GENERIC = "2222222222222222";
const T0 = 1_714_564_800_000_000_000n; // 2024-05-01T12:00:00Z

function request(project: string): TestResourceSpans[] {
  return [
    {
      resource: { "service.name": "svc", "wandb.entity": "alice", "wandb.project": project },
      spans: [
        {
          traceId: TRACE,
          spanId: ROOT,
          name: "openai.chat",
          startNanos: T0,
          endNanos: T0 + 1_500_000_000n,
          status: { code: 1 },
          attributes: {
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "Hi",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "Hello!",
            "gen_ai.usage.prompt_tokens": 10,
            "gen_ai.usage.completion_tokens": 5,
            "wandb.display_name": "Chat",
            "wandb.thread_id": "th1",
            "wandb.is_turn": true,
          },
        },
        {
          traceId: TRACE,
          spanId: CHILD,
          parentSpanId: ROOT,
          name: "chat gpt-5",
          kind: 3,
          startNanos: T0 + 100_000_000n,
          endNanos: T0 + 900_123_456n,
          status: { code: 2, message: "rate limited" },
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-5",
            "gen_ai.request.temperature": 0.5,
            "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Hi" }] }]),
            "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "Yo" }], finish_reason: "stop" }]),
            "gen_ai.usage.input_tokens": 7,
            "gen_ai.usage.output_tokens": 3,
            "app.big": { int: 9_007_199_254_740_993n },
            "app.list": ["a", 1, true],
            "app.map": { kv: { inner: "v" } },
            "app.blob": { bytes: new Uint8Array([1, 2, 3]) },
          },
        },
        {
          traceId: TRACE,
          spanId: EVENTS,
          parentSpanId: ROOT,
          name: "agent",
          startNanos: T0 + 200_000_000n,
          endNanos: T0 + 300_000_000n,
          attributes: { "gen_ai.agent.name": "helper" },
          events: [
            { name: "gen_ai.user.message", timeNanos: T0 + 200_000_000n, attributes: { content: "question?" } },
            { name: "gen_ai.choice", timeNanos: T0 + 290_000_000n, attributes: { message: "answer!", finish_reason: "stop" } },
          ],
        },
        { traceId: TRACE, spanId: GENERIC, parentSpanId: ROOT, name: "x".repeat(200), startNanos: T0, endNanos: T0 + 1000n, attributes: { "custom.key": "v", "custom.nested.n": 1 } },
      ],
    },
  ];
}

describe.each(testDialects)("OpenTelemetry ingest on %s", (dialect) => {
  let t: TestApp;
  let alice: TraceClient;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    alice = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });

  const send = (body: Buffer | string, headers: Record<string, string> = {}, key = t.keys.alice) =>
    t.app.inject({ method: "POST", url: "/trace/otel/v1/traces", payload: body, headers: { "content-type": "application/x-protobuf", "wandb-api-key": key, ...headers } });
  const callsOf = async (project: string) => Object.fromEntries((await alice.lines("/calls/stream_query", { project_id: `alice/${project}` })).map((call) => [call.id, call]));

  it("maps protobuf spans of both GenAI convention generations to calls", async () => {
    const res = await send(encodeOtlp(request("otel-pb")));
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/x-protobuf");
    expect(res.rawPayload.length).toBe(0);
    const calls = await callsOf("otel-pb");
    expect(Object.keys(calls).sort()).toEqual([CHILD, ROOT, EVENTS, GENERIC].sort());

    const root = calls[ROOT];
    expect(root).toMatchObject({
      trace_id: TRACE,
      parent_id: null,
      op_name: "openai.chat",
      display_name: "Chat",
      thread_id: "th1",
      turn_id: ROOT,
      started_at: "2024-05-01T12:00:00.000000Z",
      ended_at: "2024-05-01T12:00:01.500000Z",
      inputs: { "gen_ai.prompt": [{ role: "user", content: "Hi" }] },
      output: { "gen_ai.completion": [{ role: "assistant", content: "Hello!" }] },
      exception: null,
    });
    expect(root.attributes).toMatchObject({ system: "openai", model: "gpt-4o", model_parameters: { model: "gpt-4o" } });
    expect(root.attributes.otel_span).toMatchObject({ name: "openai.chat", context: { trace_id: TRACE, span_id: ROOT }, kind: "INTERNAL", status: { code: "OK" }, resource: { attributes: { service: { name: "svc" } } } });
    expect(root.summary.usage).toEqual({ "gpt-4o": { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    expect(root.summary.weave).toMatchObject({ status: "success", latency_ms: 1500, display_name: "Chat" });

    const child = calls[CHILD];
    expect(child).toMatchObject({
      parent_id: ROOT,
      exception: "rate limited",
      inputs: { "gen_ai.input.messages": [{ role: "user", parts: [{ type: "text", content: "Hi" }] }] },
      output: { "gen_ai.output.messages": [{ role: "assistant", parts: [{ type: "text", content: "Yo" }], finish_reason: "stop" }] },
    });
    expect(child.attributes).toMatchObject({ operation: "chat", provider: "openai", model: "gpt-5", model_parameters: { model: "gpt-5", temperature: 0.5 } });
    expect(child.attributes.otel_span.attributes.app).toEqual({ big: "9007199254740993", list: ["a", 1, true], map: { inner: "v" }, blob: "AQID" });
    expect(child.attributes.otel_span.kind).toBe("CLIENT");
    expect(child.summary.usage).toEqual({ "gpt-5": { input_tokens: 7, output_tokens: 3, total_tokens: 10 } });
    expect(child.summary.weave).toMatchObject({ status: "error", latency_ms: 800 });

    expect(calls[EVENTS]).toMatchObject({
      inputs: { "events.gen_ai.user.message": [{ content: "question?" }] },
      output: { "events.gen_ai.choice": [{ message: "answer!", finish_reason: "stop" }] },
      attributes: { agent: "helper" },
    });
    const generic = calls[GENERIC];
    expect(generic.attributes).toMatchObject({ custom: { key: "v", nested: { n: 1 } } });
    expect([...generic.op_name].length).toBeLessThanOrEqual(128);
    expect(generic.op_name).toMatch(/^x+:[0-9a-f]{4}$/);

    const threads = await alice.lines("/threads/stream_query", { project_id: "alice/otel-pb" });
    expect(threads).toEqual([expect.objectContaining({ thread_id: "th1", turn_count: 1, first_turn_id: ROOT })]);
  });

  it("accepts OTLP/JSON and gzip-encoded bodies", async () => {
    const json = await send(JSON.stringify(otlpJson(request("otel-json"))), { "content-type": "application/json" });
    expect(json.statusCode).toBe(200);
    expect(json.json()).toEqual({});
    const jsonCalls = await callsOf("otel-json");
    const pbCalls = await callsOf("otel-pb");
    expect(jsonCalls[CHILD].attributes.otel_span.attributes).toEqual(pbCalls[CHILD].attributes.otel_span.attributes);
    expect(jsonCalls[ROOT].summary).toEqual(pbCalls[ROOT].summary);

    const gz = await send(zlib.gzipSync(encodeOtlp(request("otel-gz"))), { "content-encoding": "gzip" });
    expect(gz.statusCode).toBe(200);
    expect(Object.keys(await callsOf("otel-gz"))).toHaveLength(4);
    const bad = await send(Buffer.from("not gzip"), { "content-encoding": "gzip" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().reason).toEqual(expect.any(String));
  });

  it("ingests at /agents/otel/v1/traces (Weave's agent integrations) exactly as at /otel/v1/traces", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/trace/agents/otel/v1/traces",
      payload: encodeOtlp(request("otel-agents")),
      headers: { "content-type": "application/x-protobuf", authorization: `Basic ${Buffer.from(`api:${t.keys.alice}`).toString("base64")}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/x-protobuf");
    const agents = await callsOf("otel-agents");
    const plain = await callsOf("otel-pb");
    expect(Object.keys(agents).sort()).toEqual(Object.keys(plain).sort());
    expect(agents[ROOT].attributes.otel_span.attributes).toEqual(plain[ROOT].attributes.otel_span.attributes);
    expect(agents[ROOT].summary).toEqual(plain[ROOT].summary);
    const json = await t.app.inject({
      method: "POST",
      url: "/trace/agents/otel/v1/traces",
      payload: JSON.stringify(otlpJson(request("otel-agents-json"))),
      headers: { "content-type": "application/json", "wandb-api-key": t.keys.alice },
    });
    expect(json.statusCode).toBe(200);
    expect(Object.keys(await callsOf("otel-agents-json")).sort()).toEqual(Object.keys(plain).sort());
  });

  it("rejects spans whose attributes conflict and stores the rest", async () => {
    const body = request("otel-partial");
    body[0]!.spans.push({ traceId: TRACE, spanId: "3333333333333333", name: "bad", startNanos: T0, endNanos: T0, attributes: { "gen_ai.prompt": true, "gen_ai.prompt.content": "Hello" } });
    const res = await send(encodeOtlp(body));
    expect(res.statusCode).toBe(200);
    // ExportTraceServiceResponse { partial_success (1) { rejected_spans (1), error_message (2) } }
    const bytes = res.rawPayload;
    let pos = 0;
    const varint = () => {
      let value = 0;
      for (let shift = 0; ; shift += 7) {
        const byte = bytes[pos++]!;
        value += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) return value;
      }
    };
    expect(varint()).toBe((1 << 3) | 2);
    expect(varint()).toBe(bytes.length - pos);
    expect(varint()).toBe((1 << 3) | 0);
    expect(varint()).toBe(1);
    expect(varint()).toBe((2 << 3) | 2);
    const length = varint();
    expect(bytes.subarray(pos, pos + length).toString("utf8")).toMatch(/Rejected span \(name='bad'.*gen_ai\.prompt/);
    expect(Object.keys(await callsOf("otel-partial"))).toHaveLength(4);
    const json = await send(JSON.stringify(otlpJson(body)), { "content-type": "application/json" });
    expect(json.json()).toEqual({ partial_success: { rejected_spans: 1, error_message: expect.stringContaining("gen_ai.prompt") } });
  });

  it("routes by resource attributes or header, and refuses what it cannot place", async () => {
    const noProject: TestResourceSpans[] = [{ resource: {}, spans: request("x")[0]!.spans.slice(0, 1) }];
    const missing = await send(encodeOtlp(noProject));
    expect(missing.statusCode).toBe(400);
    expect(missing.json().reason).toMatch(/wandb.project/);
    expect((await send(encodeOtlp(noProject), { project_id: "alice/otel-header" })).statusCode).toBe(200);
    expect(Object.keys(await callsOf("otel-header"))).toEqual([ROOT]);
    const onlyProject: TestResourceSpans[] = [{ resource: { "wandb.project": "otel-implicit" }, spans: noProject[0]!.spans }];
    expect((await send(encodeOtlp(onlyProject))).statusCode).toBe(200);
    expect(Object.keys(await callsOf("otel-implicit"))).toEqual([ROOT]);

    const foreign: TestResourceSpans[] = [{ resource: { "wandb.entity": "bob", "wandb.project": "p" }, spans: noProject[0]!.spans }];
    expect((await send(encodeOtlp(foreign))).statusCode).toBe(404);
    expect((await send(Buffer.from([0x0a, 0xff]))).statusCode).toBe(400);
    expect((await send(encodeOtlp(noProject), { "wandb-api-key": "" }, "")).statusCode).toBe(401);
    const basic = await t.app.inject({
      method: "POST",
      url: "/trace/otel/v1/traces",
      payload: encodeOtlp(onlyProject),
      headers: { "content-type": "application/x-protobuf", authorization: `Basic ${Buffer.from(`api:${t.keys.alice}`).toString("base64")}` },
    });
    expect(basic.statusCode).toBe(200);
  });
});
