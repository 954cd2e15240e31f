/**
 * Chat messages out of what the APIs store: a trajectory's `messages_and_choices` (messages and
 * sampled OpenAI choices, told apart by `finish_reason`/`message`), and a trace call's inputs and
 * output (OpenAI chat requests and responses). Pure data; the components render it.
 */

export interface ToolCallView {
  id?: string;
  name: string;
  arguments: string;
}

export interface TokenView {
  /** The token's text (decoded from its bytes when the sampler returned token ids). */
  text: string;
  /** The sampler's logprob (NaN when it gave none). */
  logprob: number;
  /** The trainer's recomputed logprob, when the job trained on the token (null: not scored). */
  trainerLogprob?: number | null;
}

export interface MessageView {
  role: string;
  content: string;
  toolCalls: ToolCallView[];
  /** For tool results: the call they answer. */
  toolCallId?: string;
  /** Set on sampled choices: what the model generated (and the trainer learns from). */
  sampled: boolean;
  tokens?: TokenView[];
  finishReason?: string;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** A sampled choice as the OpenAI SDK dumps it (what ART's `messages_and_choices` holds). */
export function isChoice(item: unknown): boolean {
  return isObject(item) && isObject(item.message) && ("finish_reason" in item || "logprobs" in item) && !("role" in item);
}

/** Text of a message content: a string, or the text parts of a content array. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (isObject(part) ? (typeof part.text === "string" ? part.text : part.type === "image_url" ? "[image]" : "") : String(part)))
      .filter((text) => text !== "")
      .join("\n");
  }
  if (content === null || content === undefined) return "";
  return JSON.stringify(content);
}

function toolCallsOf(value: unknown): ToolCallView[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((call) => {
    const fn = isObject(call.function) ? call.function : {};
    return {
      ...(typeof call.id === "string" ? { id: call.id } : {}),
      name: typeof fn.name === "string" ? fn.name : "?",
      arguments: typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
    };
  });
}

/** A token's display text: its UTF-8 bytes when given (token-id mode), else the token string. */
export function tokenText(token: Json): string {
  if (Array.isArray(token.bytes) && token.bytes.every((byte) => typeof byte === "number")) {
    return new TextDecoder("utf-8", { fatal: false }).decode(new Uint8Array(token.bytes as number[]));
  }
  return typeof token.token === "string" ? token.token : "";
}

export function messageOf(item: unknown): MessageView {
  if (isChoice(item)) {
    const choice = item as Json;
    const message = choice.message as Json;
    const logprobs = isObject(choice.logprobs) && Array.isArray(choice.logprobs.content) ? (choice.logprobs.content as unknown[]) : undefined;
    return {
      role: "assistant",
      content: contentText(message.content),
      toolCalls: toolCallsOf(message.tool_calls),
      sampled: true,
      ...(logprobs ? { tokens: logprobs.filter(isObject).map((token) => ({ text: tokenText(token), logprob: typeof token.logprob === "number" ? token.logprob : NaN })) } : {}),
      ...(typeof choice.finish_reason === "string" ? { finishReason: choice.finish_reason } : {}),
    };
  }
  const message = isObject(item) ? item : {};
  return {
    role: typeof message.role === "string" ? message.role : "?",
    content: contentText(message.content),
    toolCalls: toolCallsOf(message.tool_calls),
    ...(typeof message.tool_call_id === "string" ? { toolCallId: message.tool_call_id } : {}),
    sampled: false,
  };
}

/**
 * A trajectory's messages; `trainerLogprobs` (item index → one value per sampled token, from the
 * trajectory-groups route) are set beside the sampler's on each choice's tokens.
 */
export function trajectoryMessages(items: readonly unknown[] | undefined, trainerLogprobs?: Record<string, (number | null)[]> | null): MessageView[] {
  return (items ?? []).map((item, index) => {
    const view = messageOf(item);
    const trainer = trainerLogprobs?.[String(index)];
    if (!view.tokens || !trainer) return view;
    return { ...view, tokens: view.tokens.map((token, t) => ({ ...token, trainerLogprob: trainer[t] ?? null })) };
  });
}

/**
 * The conversation of a trace call when it is a chat completion: the request's `messages` then
 * the response's choices. Undefined when the call does not look like one.
 */
export function callMessages(inputs: unknown, output: unknown): MessageView[] | undefined {
  const request = isObject(inputs) && isObject(inputs.params) && Array.isArray(inputs.params.messages) ? inputs.params : inputs;
  if (!isObject(request) || !Array.isArray(request.messages)) return undefined;
  const messages = request.messages.map(messageOf);
  if (isObject(output) && Array.isArray(output.choices)) {
    for (const choice of output.choices) if (isObject(choice) && isObject(choice.message)) messages.push({ ...messageOf({ finish_reason: null, ...choice }), tokens: undefined });
  }
  return messages;
}
