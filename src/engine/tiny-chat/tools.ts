/**
 * The example tools tiny-chat knows how to call, in OpenAI's `tools` format, and the arithmetic
 * behind their results. Requests that send these definitions (all of them or any subset, in this
 * order) get the tool calls the model was trained on.
 */
export const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the current weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
} as const;

export const CONVERT_TOOL = {
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
} as const;

export const CALCULATOR_TOOL = {
  type: "function",
  function: {
    name: "calculate",
    description: "Evaluate an arithmetic expression.",
    parameters: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] },
  },
} as const;

export type ToolDefinition = typeof WEATHER_TOOL | typeof CONVERT_TOOL | typeof CALCULATOR_TOOL;

/** All example tools, in the order a request lists them. */
export const TINY_CHAT_TOOLS: readonly ToolDefinition[] = [WEATHER_TOOL, CONVERT_TOOL, CALCULATOR_TOOL];

/** Conversions between the units the convert_units tool knows: factor and offset (celsius → fahrenheit needs one). */
export const UNIT_CONVERSIONS: readonly { from: string; to: string; factor: number; offset: number }[] = [
  { from: "km", to: "miles", factor: 0.621371, offset: 0 },
  { from: "miles", to: "km", factor: 1.609344, offset: 0 },
  { from: "kg", to: "pounds", factor: 2.204623, offset: 0 },
  { from: "pounds", to: "kg", factor: 0.453592, offset: 0 },
  { from: "meters", to: "feet", factor: 3.28084, offset: 0 },
  { from: "feet", to: "meters", factor: 0.3048, offset: 0 },
  { from: "celsius", to: "fahrenheit", factor: 1.8, offset: 32 },
  { from: "fahrenheit", to: "celsius", factor: 5 / 9, offset: (-32 * 5) / 9 },
];

/** value converted and rounded to two decimals (what the tool returns). */
export function convertUnits(value: number, from: string, to: string): number {
  const conversion = UNIT_CONVERSIONS.find((entry) => entry.from === from && entry.to === to);
  if (!conversion) throw new RangeError(`no conversion from ${from} to ${to}`);
  return Math.round((value * conversion.factor + conversion.offset) * 100) / 100;
}
