/**
 * What it costs to turn stored call rows into the JSON of a `/calls/stream_query` answer: each
 * call's inputs and output parsed and serialized again (`toCallSchema` + JSON.stringify, as
 * before D-TRACE-070), or their stored text spliced in (`toCallSchema(…, true)` +
 * `stringifyWithJsonText`). The rows are what the store returns for chat-shaped calls (12 messages
 * and a tool in, a completion out, about 1.7 kB). No database: only the conversion is timed.
 *
 *   npx tsx bench/trace-answer.ts          # BENCH_CALLS (60000), BENCH_ROUNDS (3)
 */
import { CALL_FIELDS, toCallSchema } from "../src/store/trace/calls/records.js";
import { stringifyWithJsonText } from "../src/store/trace/json-text.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 60_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const inputs = {
  model: "gpt-4o-mini",
  temperature: 0.7,
  messages: Array.from({ length: 12 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `message number ${i} with a few words in it`, name: null, tool_calls: [] })),
  tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
};
const output = { choices: [{ index: 0, message: { role: "assistant", content: "word ".repeat(40) }, finish_reason: "stop" }], usage: { prompt_tokens: 120, completion_tokens: 40 } };
const rows = Array.from({ length: CALLS }, (_, i) => ({
  id: `c${i}`,
  project_id: "e/p",
  op_name: "weave:///e/p/op/chat:v0",
  display_name: null,
  trace_id: `t${i}`,
  parent_id: null,
  thread_id: null,
  turn_id: null,
  started_at: "2026-01-01T00:00:00.000000Z",
  attributes: JSON.stringify({ weave: { client_version: "0.52.0" } }),
  inputs: JSON.stringify(inputs),
  ended_at: "2026-01-01T00:00:01.000000Z",
  exception: null,
  output: JSON.stringify(output),
  summary: JSON.stringify({ usage: { "gpt-4o-mini": { requests: 1 } } }),
  wb_user_id: "u",
  wb_run_id: null,
  wb_run_step: null,
  wb_run_step_end: null,
  deleted_at: null,
}));

function time(convert: (row: Record<string, unknown>) => string): { ms: number; bytes: number } {
  const started = performance.now();
  let bytes = 0;
  for (const row of rows) bytes += convert(row).length;
  return { ms: performance.now() - started, bytes };
}

for (let round = 1; round <= ROUNDS; round++) {
  const parsed = time((row) => JSON.stringify(toCallSchema(row, CALL_FIELDS)));
  const spliced = time((row) => stringifyWithJsonText(toCallSchema(row, CALL_FIELDS, true)));
  if (parsed.bytes !== spliced.bytes) throw new Error(`the answers differ: ${parsed.bytes} and ${spliced.bytes} characters`);
  console.log(`round ${round}: ${CALLS} calls, ${(parsed.bytes / 1e6).toFixed(1)} MB: parsed and re-serialized ${parsed.ms.toFixed(0)} ms, spliced ${spliced.ms.toFixed(0)} ms (${(parsed.ms / spliced.ms).toFixed(1)}x)`);
}
