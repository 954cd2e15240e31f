/**
 * Chat completions with the OpenAI SDK against Flywheel: a plain request, a streamed one, a reply
 * constrained to a JSON schema, and a tool call answered with the tool's result.
 *
 *   npx tsx examples/chat.ts
 *
 * Needs a running server (`npm start`) and FLYWHEEL_API_KEY; see examples/shared.ts for the
 * settings. Everything here is plain OpenAI SDK code: only `baseURL` points at Flywheel.
 */
import type OpenAI from "openai";
import { connect, run } from "./shared.js";

/** The tools the default model was trained to call (any OpenAI-format tools work). */
const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get the current weather in a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
  {
    type: "function",
    function: {
      name: "convert_units",
      description: "Convert a value from one unit to another.",
      parameters: {
        type: "object",
        properties: { value: { type: "number" }, from_unit: { type: "string" }, to_unit: { type: "string" } },
        required: ["value", "from_unit", "to_unit"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "calculate",
      description: "Evaluate an arithmetic expression.",
      parameters: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] },
    },
  },
];

/** Our side of the tool: what a real application would look up. */
function runTool(name: string, args: Record<string, unknown>): string {
  if (name === "get_weather") return JSON.stringify({ city: args.city, temperature_c: 18, conditions: "sunny" });
  return JSON.stringify({ error: `this example only implements get_weather, not ${name}` });
}

/** A JSON schema the reply must follow; the server enforces it token by token. */
const personSchema = {
  type: "object",
  properties: { name: { type: "string", maxLength: 24 }, age: { type: "integer", minimum: 0, maximum: 150 } },
  required: ["name", "age"],
  additionalProperties: false,
};

async function main(): Promise<void> {
  const { client, model, baseUrl } = await connect();
  console.log(`Chatting with ${model} at ${baseUrl}\n`);
  // Greedy decoding (temperature 0) makes every run print the same replies.
  const common = { model, temperature: 0, max_completion_tokens: 64 };

  console.log("== 1. A plain request");
  const question = "What is 12 + 7?";
  const plain = await client.chat.completions.create({ ...common, messages: [{ role: "user", content: question }] });
  console.log(`> ${question}`);
  // vLLM's field for the reasoning a model writes before its answer (a `<think>` block), when it writes one.
  const reasoning = (plain.choices[0]!.message as { reasoning?: string | null }).reasoning;
  if (reasoning) console.log(`  (reasoning: ${JSON.stringify(reasoning.trim())})`);
  console.log(`< ${plain.choices[0]!.message.content?.trim()}`);
  console.log(`  (finish_reason ${plain.choices[0]!.finish_reason}; ${plain.usage!.prompt_tokens} prompt tokens, ${plain.usage!.completion_tokens} completion tokens)\n`);

  console.log("== 2. Streaming: the reply arrives token by token");
  const streamQuestion = "Who are you?";
  console.log(`> ${streamQuestion}`);
  process.stdout.write("< ");
  const stream = await client.chat.completions.create({ ...common, messages: [{ role: "user", content: streamQuestion }], stream: true, stream_options: { include_usage: true } });
  let chunks = 0;
  let streamed = "";
  for await (const chunk of stream) {
    const text = chunk.choices[0]?.delta.content ?? "";
    if (text) {
      chunks++;
      streamed += text;
      process.stdout.write(text);
    }
  }
  console.log(`\n  (${chunks} chunks with text, ${streamed.length} characters)\n`);

  console.log("== 3. Structured output: the reply follows a JSON schema");
  const extract = "Extract the name and age as JSON. Text: Maria is 34 years old.";
  const structured = await client.chat.completions.create({
    ...common,
    max_completion_tokens: 64,
    messages: [{ role: "user", content: extract }],
    response_format: { type: "json_schema", json_schema: { name: "person", schema: personSchema, strict: true } },
  });
  const json = structured.choices[0]!.message.content ?? "";
  console.log(`> ${extract}`);
  console.log(`< ${json}`);
  if (structured.choices[0]!.finish_reason === "length") {
    console.log("  (the reply hit max_completion_tokens before the JSON was complete)\n");
  } else {
    console.log(`  parsed: ${JSON.stringify(JSON.parse(json))}\n`);
  }

  console.log("== 4. A tool call, then the answer from the tool's result");
  const weatherQuestion = "What is the weather in Paris?";
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: weatherQuestion }];
  // "required" makes the model call one of the tools; "auto" (the default with tools) lets it choose.
  const calling = await client.chat.completions.create({ ...common, max_completion_tokens: 96, messages, tools, tool_choice: "required", parallel_tool_calls: false });
  const call = calling.choices[0]!.message.tool_calls?.[0];
  console.log(`> ${weatherQuestion}`);
  if (call?.type !== "function") {
    console.log(`  (no complete tool call: finish_reason ${calling.choices[0]!.finish_reason})\n`);
    return;
  }
  const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
  console.log(`< tool call: ${call.function.name}(${JSON.stringify(args)})`);
  const result = runTool(call.function.name, args);
  console.log(`  tool result: ${result}`);
  messages.push(calling.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: result });
  const answer = await client.chat.completions.create({ ...common, messages, tools });
  console.log(`< ${answer.choices[0]!.message.content}\n`);
}

run(main);
