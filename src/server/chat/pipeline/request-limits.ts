import type { ChatLimits, Config } from "../../../config.js";
import { ArrayLengthScan } from "../../json-array-lengths.js";
import type { BodyScan } from "../../routes.js";
import { chatRuleError } from "../common/chat-errors.js";
import type { ChatCompletionRequest } from "../completions/protocol.js";

/**
 * The server's own limits on a chat request (docs/configuration.md, "Chat limits"), checked right
 * after the schema and before anything whose cost grows with the request (model loading,
 * template rendering, tokenization), so an oversized request fails at once with a 400 and never
 * holds up other requests.
 */
export function checkRequestLimits(req: ChatCompletionRequest, limits: ChatLimits): void {
  const requestTemplate = req.chat_template ?? req.chat_template_kwargs?.chat_template;
  if (requestTemplate !== null && requestTemplate !== undefined && !limits.trustRequestChatTemplate) {
    throw chatRuleError("Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.");
  }
  checkRequestSize(req, limits);
}

/**
 * The route options that put chat's size limits on a route whose body has top-level `messages` and
 * `tools` (chat, Messages, Responses): counted in the raw text before parsing, checked again on
 * the parsed body, and a body limit.
 */
export function chatSizeLimits(config: Pick<Config, "bodyLimitBytes" | "chat">) {
  return {
    prescan: () => requestSizeScan(config.chat),
    precheck: (body: unknown) => checkRequestSize(body, config.chat),
    bodyLimit: chatBodyLimit(config),
  };
}

/**
 * The chat route's body limit: a body can hold at most FLYWHEEL_MAX_PROMPT_CHARS characters of
 * prompt text, 6 bytes each at worst (`\uXXXX`), plus 1 MiB of the rest, so a body past that is
 * refused (413) from its Content-Length before it is read or parsed. Never above the server's.
 */
export function chatBodyLimit(config: Pick<Config, "bodyLimitBytes" | "chat">): number {
  return Math.min(config.bodyLimitBytes, config.chat.maxPromptChars * 6 + 1024 * 1024);
}

/**
 * The size limits alone, on any body (also one the schema has not seen yet: the route runs this
 * first, so a huge request never reaches the schema's per-item work).
 */
export function checkRequestSize(body: unknown, limits: ChatLimits): void {
  if (body === null || typeof body !== "object") return;
  const { messages, tools, chat_template: template } = body as Record<string, unknown>;
  checkCounts(Array.isArray(messages) ? messages.length : 0, Array.isArray(tools) ? tools.length : 0, limits);
  const chars = textSize([messages, tools, template], limits.maxPromptChars);
  if (chars > limits.maxPromptChars) {
    throw chatRuleError(`The request's messages, tools and template hold more than ${limits.maxPromptChars} characters, this server's limit for a prompt (FLYWHEEL_MAX_PROMPT_CHARS).`, { param: "messages" });
  }
}

/**
 * The message and tool counts again, on the body's JSON text as it is uploaded, chunk by chunk:
 * building 200,000 messages would hold the loop for hundreds of milliseconds only to refuse them,
 * and even joining and decoding their 6 MB of text, tens. `end` throws the 400 with the whole
 * body's counts; it may be asked early (an array still open counts what it holds so far, and
 * counts only grow), so the body need not be kept once it will be refused.
 */
export function requestSizeScan(limits: ChatLimits): BodyScan {
  const scan = new ArrayLengthScan(["messages", "tools"]);
  return {
    feed: (chunk: string) => scan.feed(chunk),
    end() {
      const open = scan.openCount();
      const count = (key: string) => Math.max(scan.lengths.get(key) ?? 0, open?.key === key ? open.count : 0);
      checkCounts(count("messages"), count("tools"), limits);
    },
  };
}

function checkCounts(messages: number, tools: number, limits: ChatLimits): void {
  if (messages > limits.maxMessages) {
    throw chatRuleError(`The request has ${messages} messages, more than this server's limit of ${limits.maxMessages} (FLYWHEEL_MAX_MESSAGES).`, { param: "messages" });
  }
  if (tools > limits.maxTools) {
    throw chatRuleError(`The request has ${tools} tools, more than this server's limit of ${limits.maxTools} (FLYWHEEL_MAX_TOOLS).`, { param: "tools" });
  }
}

/**
 * Characters of every string (keys included) in a JSON value, stopping once past `cap`: the
 * prompt a template renders from these holds at least their text.
 */
export function textSize(value: unknown, cap: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= cap) {
    const item = stack.pop();
    if (typeof item === "string") total += item.length;
    else if (Array.isArray(item)) for (const member of item) stack.push(member);
    else if (item !== null && typeof item === "object") {
      for (const [key, member] of Object.entries(item)) {
        total += key.length;
        stack.push(member);
      }
    }
  }
  return total;
}
