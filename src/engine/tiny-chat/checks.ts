import type { Expectation } from "./examples.js";

/** A tool call as the chat endpoint's Hermes parser reads it from `<tool_call>` blocks. */
export interface ParsedToolCall {
  name: string;
  arguments: unknown;
}

const TOOL_CALL_BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>/g;

/** The calls in Hermes blocks, or null when a block is not a JSON object with a string name. */
export function parseToolCalls(text: string): ParsedToolCall[] | null {
  const calls: ParsedToolCall[] = [];
  for (const match of text.matchAll(TOOL_CALL_BLOCK)) {
    let value: unknown;
    try {
      value = JSON.parse(match[1]!);
    } catch {
      return null;
    }
    if (typeof value !== "object" || value === null || typeof (value as { name?: unknown }).name !== "string") return null;
    const { name, arguments: args } = value as { name: string; arguments?: unknown };
    calls.push({ name, arguments: args ?? {} });
  }
  return calls;
}

/** Deep equality of JSON values, object keys in any order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/** Whether `text` holds `value` as a whole word or number, case-insensitively ("Ana" is not in "Anastasia", 12 not in 125, -12 or 12.5). */
export function mentionsWord(text: string, value: string): boolean {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\p{L}\\p{N}-])${escaped}(?![\\p{L}\\p{N}]|\\.\\d)`, "iu").test(text);
}

/**
 * The reply's content without a leading `<think>` block, as the chat API's reasoning parser splits
 * it off into `reasoning` (empty while the block is still open: no answer yet).
 */
export function replyContent(reply: string): string {
  const start = reply.trimStart();
  if (!start.startsWith("<think>")) return reply;
  const end = start.indexOf("</think>");
  return end < 0 ? "" : start.slice(end + "</think>".length).trimStart();
}

/** Whether a generated reply (raw text, special tokens such as `<tool_call>` kept) meets the expectation, reasoning aside. */
export function checkReply(expected: Expectation, rawReply: string): boolean {
  const reply = replyContent(rawReply);
  switch (expected.kind) {
    case "number": {
      const first = reply.match(/-?\d+(?:\.\d+)?/);
      return first !== null && Number(first[0]) === expected.value;
    }
    case "contains":
      return expected.values.every((value) => mentionsWord(reply, value));
    case "json": {
      try {
        return sameJson(JSON.parse(reply.trim()), expected.value);
      } catch {
        return false;
      }
    }
    case "tool_call": {
      const calls = parseToolCalls(reply);
      return calls !== null && calls.length === 1 && calls[0]!.name === expected.name && sameJson(calls[0]!.arguments, expected.arguments);
    }
  }
}
