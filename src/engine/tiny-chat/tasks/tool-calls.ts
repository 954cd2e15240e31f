import type { ChatMessage } from "../../train/trajectory.js";
import { fill, jsonText, type TinyChatExample } from "../examples.js";
import type { TaskRandom } from "../random.js";
import { CALCULATOR_TOOL, CONVERT_TOOL, convertUnits, TINY_CHAT_TOOLS, type ToolDefinition, UNIT_CONVERSIONS, WEATHER_TOOL } from "../tools.js";
import { CITIES, CONDITIONS } from "../words.js";

const WEATHER_REQUESTS = [
  "What's the weather in {city}?",
  "What is the weather like in {city} today?",
  "How warm is it in {city}?",
  "Is it raining in {city}?",
  "Weather in {city}, please.",
  "Tell me the weather for {city}.",
  "Check the weather in {city} for me.",
  "How is the weather in {city} right now?",
];
const CONVERT_REQUESTS = ["Convert {value} {from} to {to}.", "How many {to} is {value} {from}?", "What is {value} {from} in {to}?", "{value} {from} in {to}, please.", "Please convert {value} {from} into {to}."];
const CALCULATOR_REQUESTS = ["Use the calculator to work out {expression}.", "Calculate {expression} with the calculator.", "Please use the tool to compute {expression}.", "Work out {expression} using the calculator."];

/** One request for a tool: the user's words, the call that answers it, the tool's result and the final reply. */
interface ToolScenario {
  /** Identity of the request (what the call depends on). */
  requestKey: string;
  /** Identity of the request and the tool's result (what the final reply depends on). */
  resultKey: string;
  tool: ToolDefinition;
  request: string;
  arguments: Record<string, string | number>;
  result: Record<string, string | number>;
  answer: string;
  /** What the final reply must mention. */
  mentions: string[];
}

function weatherScenario(random: TaskRandom): ToolScenario {
  const city = random.pick(CITIES);
  const temperature = random.between(-10, 38);
  const condition = random.pick(CONDITIONS);
  const template = random.int(WEATHER_REQUESTS.length);
  return {
    requestKey: `weather:${template}:${city}`,
    resultKey: `weather:${template}:${city}:${temperature}:${condition}`,
    tool: WEATHER_TOOL,
    request: fill(WEATHER_REQUESTS[template]!, { city }),
    arguments: { city },
    result: { city, temperature, condition },
    answer: `It is ${temperature} degrees and ${condition} in ${city}.`,
    mentions: [String(temperature), condition],
  };
}

function convertScenario(random: TaskRandom): ToolScenario {
  const { from, to } = random.pick(UNIT_CONVERSIONS);
  const value = random.between(1, 200);
  const converted = convertUnits(value, from, to);
  const template = random.int(CONVERT_REQUESTS.length);
  return {
    requestKey: `convert:${template}:${value}:${from}:${to}`,
    resultKey: `convert:${template}:${value}:${from}:${to}`,
    tool: CONVERT_TOOL,
    request: fill(CONVERT_REQUESTS[template]!, { value, from, to }),
    arguments: { value, from_unit: from, to_unit: to },
    result: { result: converted },
    answer: `${value} ${from} is ${converted} ${to}.`,
    mentions: [String(converted)],
  };
}

function calculatorScenario(random: TaskRandom): ToolScenario {
  const operator = random.pick(["+", "-", "*"] as const);
  const a = random.between(100, 9999);
  const b = random.between(2, 999);
  const expression = `${a} ${operator} ${b}`;
  const value = operator === "+" ? a + b : operator === "-" ? a - b : a * b;
  const template = random.int(CALCULATOR_REQUESTS.length);
  return {
    requestKey: `calculate:${template}:${expression}`,
    resultKey: `calculate:${template}:${expression}`,
    tool: CALCULATOR_TOOL,
    request: fill(CALCULATOR_REQUESTS[template]!, { expression }),
    arguments: { expression },
    result: { result: value },
    answer: `${expression} = ${value}.`,
    mentions: [String(value)],
  };
}

function scenario(random: TaskRandom): ToolScenario {
  const make = random.pick([weatherScenario, convertScenario, calculatorScenario]);
  return make(random);
}

/**
 * The tools a request sends: all of them, or the needed one alone. Few distinct tool lists keep
 * the system turns few, so packed training rows share them (`packStep`).
 */
export function toolSet(random: TaskRandom, needed: ToolDefinition): ToolDefinition[] {
  return random.chance(0.6) ? [...TINY_CHAT_TOOLS] : [needed];
}

function callMessage(scenario: ToolScenario): ChatMessage {
  return { role: "assistant", content: "", tool_calls: [{ type: "function", function: { name: scenario.tool.function.name, arguments: scenario.arguments } }] };
}

/**
 * The first turn: the user asks for something a tool provides; the reply is the Hermes tool call.
 * One training reply in four is instead the JSON array that `tool_choice: "required"` constrains
 * output to (`[{"name": …, "parameters": …}]`): the prompt is the same, so greedy decoding still
 * picks the Hermes call (which is what `expected` checks), and a constrained reply that must start
 * with `[` continues the way it was taught.
 */
export function toolCallExample(random: TaskRandom): TinyChatExample {
  const chosen = scenario(random);
  const name = chosen.tool.function.name;
  const required = random.int(4) === 0;
  const reply: ChatMessage = required ? { role: "assistant", content: `[{"name": "${name}", "parameters": ${jsonText(chosen.arguments)}}]` } : callMessage(chosen);
  return {
    task: "tool_call",
    key: chosen.requestKey,
    messages: [{ role: "user", content: chosen.request }, reply],
    tools: toolSet(random, chosen.tool),
    expected: { kind: "tool_call", name, arguments: chosen.arguments },
  };
}

/** The second turn: after the tool's result, the reply states it in words. */
export function toolAnswerExample(random: TaskRandom): TinyChatExample {
  const chosen = scenario(random);
  return {
    task: "tool_answer",
    key: chosen.resultKey,
    messages: [{ role: "user", content: chosen.request }, callMessage(chosen), { role: "tool", content: jsonText(chosen.result) }, { role: "assistant", content: chosen.answer }],
    tools: toolSet(random, chosen.tool),
    expected: { kind: "contains", values: chosen.mentions },
  };
}
