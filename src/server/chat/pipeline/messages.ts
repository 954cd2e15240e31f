import { chatRuleError } from "../common/chat-errors.js";
import type { ChatMessageIn, ContentPartIn, ToolDefinitionIn } from "../completions/protocol.js";

/**
 * Request messages → the `messages` and `tools` a chat template sees, as vLLM prepares them for Hugging
 * Face's apply_chat_template (`docs/api/chat.md#tools`, `docs/api/chat.md#reasoning`,
 * `docs/api/chat.md#content-parts`): text parts joined with "\n" (or kept as a list for templates that loop
 * over content), assistant tool-call arguments parsed into objects, reasoning under both of its names, custom
 * roles passed through.
 */

/** "string": content is one string; "openai": content is a list of `{type: "text", text}` parts. */
export type ContentFormat = "string" | "openai";

export interface TemplateMessage {
  role: string;
  content: string | { type: "text"; text: string }[];
  name?: string;
  tool_calls?: { id?: string; type: "function"; function: { name: string; arguments: unknown } }[];
  tool_call_id?: string;
  reasoning?: string;
  reasoning_content?: string;
}

export interface TemplateTool {
  type: "function";
  function: { name: string; description: string | null; parameters: Record<string, unknown> | null; strict?: boolean };
}

const CONTENT_LOOP = /\{%-?\s*for\s+\w+\s+in\s+\w+\s*(\[\s*['"]content['"]\s*\]|\.content)\s*-?%\}/;

/**
 * Whether a template iterates over `message['content']` (then it gets the list form), found the
 * way vLLM's detection reads the template; anything else gets plain strings.
 */
export function detectContentFormat(template: string): ContentFormat {
  return CONTENT_LOOP.test(template) ? "openai" : "string";
}

function partText(part: ContentPartIn): string {
  if (typeof part === "string") return part;
  return (part.type === "refusal" ? part.refusal : part.text) ?? "";
}

/** The text of a message's content: text parts joined with "\n"; null content is empty. */
export function contentText(content: ChatMessageIn["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map(partText).join("\n");
}

function templateContent(message: ChatMessageIn, format: ContentFormat): TemplateMessage["content"] {
  // Tool results are always flattened to one string (vLLM does this for every template).
  if (format === "string" || message.role === "tool") return contentText(message.content);
  const content = message.content;
  if (content === null || content === undefined) return [];
  const parts = typeof content === "string" ? [content] : content;
  return parts.map((part) => ({ type: "text" as const, text: partText(part) }));
}

/** HF templates expect arguments as objects: a JSON string is parsed, empty or missing becomes `{}`. */
function parseArguments(raw: string | Record<string, unknown> | null | undefined, messageIndex: number): unknown {
  if (raw === null || raw === undefined || raw === "") return {};
  if (typeof raw !== "string") return raw;
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw chatRuleError(`messages[${messageIndex}].tool_calls: arguments are not valid JSON: ${(error as Error).message}`, { param: "messages" });
  }
}

export function toTemplateMessages(messages: ChatMessageIn[], format: ContentFormat): TemplateMessage[] {
  return messages.map((message, index) => {
    const out: TemplateMessage = { role: message.role, content: templateContent(message, format) };
    if (typeof message.name === "string") out.name = message.name;
    if (message.role === "assistant") {
      if (message.tool_calls && message.tool_calls.length > 0) {
        out.tool_calls = message.tool_calls.map((call) => ({
          ...(call.id ? { id: call.id } : {}),
          type: "function" as const,
          function: { name: call.function.name, arguments: parseArguments(call.function.arguments, index) },
        }));
      }
      const reasoning = message.reasoning ?? message.reasoning_content;
      if (reasoning !== null && reasoning !== undefined) {
        out.reasoning = reasoning;
        out.reasoning_content = reasoning;
      }
    }
    if (message.role === "tool" && typeof message.tool_call_id === "string") out.tool_call_id = message.tool_call_id;
    return out;
  });
}

export function toTemplateTools(tools: ToolDefinitionIn[] | null | undefined): TemplateTool[] | undefined {
  if (!tools) return undefined;
  return tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.function.name,
      description: tool.function.description ?? null,
      parameters: tool.function.parameters ?? null,
      ...(tool.function.strict !== null && tool.function.strict !== undefined ? { strict: tool.function.strict } : {}),
    },
  }));
}
