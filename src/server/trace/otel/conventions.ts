import { tryParseInt } from "./attributes.js";

/**
 * Where inputs, outputs, usage and call attributes live in the span attributes of the common
 * tracing conventions, in priority order (Weave's `opentelemetry/constants.py`). Both generations
 * of the GenAI semantic conventions are covered: the first (`gen_ai.prompt.N.*`,
 * `gen_ai.completion.N.*`, `gen_ai.usage.prompt_tokens`, `gen_ai.content.*` events) and the
 * current one (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`,
 * `gen_ai.usage.input_tokens`, `gen_ai.provider.name`, per-message events such as
 * `gen_ai.user.message` and `gen_ai.choice`). Event attributes are reachable as
 * `events.<event name>` (a list, one entry per event).
 */
export const INPUT_KEYS = [
  "ai.prompt",
  "gen_ai.prompt",
  "input.value",
  "mlflow.spanInputs",
  "gen_ai.input.messages",
  "pydantic_ai.all_messages",
  "traceloop.entity.input",
  "gcp.vertex.agent.tool_call_args",
  "gcp.vertex.agent.llm_request",
  "events.gen_ai.user.message",
  "events.gen_ai.content.prompt",
  "input",
  "inputs",
];

export const OUTPUT_KEYS = [
  "ai.response",
  "gen_ai.completion",
  "output.value",
  "gen_ai.output.messages",
  "mlflow.spanOutputs",
  "final_result",
  "gen_ai.content.completion",
  "traceloop.entity.output",
  "gcp.vertex.agent.tool_response",
  "gcp.vertex.agent.llm_response",
  "events.gen_ai.choice",
  "events.gen_ai.content.completion",
  "output",
  "outputs",
];

export const USAGE_KEYS: Record<string, [string, (value: unknown) => unknown][]> = {
  input_tokens: [["gen_ai.usage.input_tokens", tryParseInt]],
  prompt_tokens: [
    ["gen_ai.usage.prompt_tokens", tryParseInt],
    ["llm.token_count.prompt", tryParseInt],
    ["ai.usage.promptTokens", tryParseInt],
  ],
  completion_tokens: [
    ["gen_ai.usage.completion_tokens", tryParseInt],
    ["llm.token_count.completion", tryParseInt],
    ["ai.usage.completionTokens", tryParseInt],
  ],
  output_tokens: [["gen_ai.usage.output_tokens", tryParseInt]],
  total_tokens: [
    ["llm.usage.total_tokens", tryParseInt],
    ["llm.token_count.total", tryParseInt],
  ],
};

export const ATTRIBUTE_KEYS: Record<string, string[]> = {
  system: ["gen_ai.system", "llm.system", "gen_ai.system_instructions", "system_prompt"],
  kind: ["weave.span.kind", "traceloop.span.kind", "openinference.span.kind"],
  model: ["gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.model.id"],
  provider: ["llm.provider", "ai.model.provider", "gen_ai.provider.name"],
  model_parameters: ["gen_ai.request", "llm.invocation_parameters"],
  agent: ["gen_ai.agent.name"],
  tools: ["gen_ai.agent.tools"],
  operation: ["gen_ai.operation.name"],
};

export const WB_KEYS: Record<string, string[]> = {
  display_name: ["wandb.display_name"],
  thread_id: ["gcp.vertex.agent.session_id", "wandb.thread_id"],
  attributes: ["wandb.attributes"],
  wb_run_id: ["wandb.wb_run_id"],
  wb_run_step: ["wandb.wb_run_step"],
  wb_run_step_end: ["wandb.wb_run_step_end"],
  is_turn: ["gcp.vertex.agent.session_id", "wandb.is_turn"],
};

export const SPAN_OVERRIDES = { start_time: "langfuse.startTime", end_time: "langfuse.endTime" };

export const MAX_OP_NAME_LENGTH = 128;
export const MAX_DISPLAY_NAME_LENGTH = 1024;
