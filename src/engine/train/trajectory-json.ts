/**
 * The JSON shapes of chat data inside trajectories (messages, Choices, tools, captured Chat
 * Completions exchanges), apart from `trajectory.ts` so that `exchange-kinds.ts`, which
 * `trajectory.ts` uses, can name them without importing it back.
 */

export interface ToolCallJson {
  id?: string | null;
  type?: string | null;
  function: { name: string; arguments: unknown };
  [key: string]: unknown;
}

/** A plain chat message (any role, any extra keys). */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: ToolCallJson[] | null;
  [key: string]: unknown;
}

export interface TokenLogprobJson {
  token: string;
  logprob: number;
  bytes?: number[] | null;
  [key: string]: unknown;
}

/** An OpenAI chat-completion Choice as `model_dump(mode="json")` writes it. */
export interface ChoiceJson {
  message: { role?: string; content?: string | null; tool_calls?: ToolCallJson[] | null; [key: string]: unknown };
  logprobs?: { content?: TokenLogprobJson[] | null; refusal?: TokenLogprobJson[] | null } | null;
  finish_reason?: string | null;
  index?: number;
  /** vLLM's `return_token_ids` extra: the exact sampled ids. */
  token_ids?: number[] | null;
  [key: string]: unknown;
}

/** A tool in OpenAI format, or a bare function object (wrapped by `normalizeTools`). */
export type ChatTool = Record<string, unknown>;

/** One captured Chat Completions call (ART's `ChatCompletionsExchange`): the request body and the response. */
export interface ChatCompletionsExchangeJson {
  request: { messages: ChatMessage[]; tools?: ChatTool[] | null; [key: string]: unknown };
  response: { choices: ChoiceJson[]; prompt_token_ids?: number[] | null; [key: string]: unknown };
  [key: string]: unknown;
}
