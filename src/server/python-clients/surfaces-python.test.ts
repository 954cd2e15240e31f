import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatServer, startChatServer } from "../../testing/chat-server.js";
import { tinyModel } from "../../testing/models.js";
import { testPython } from "../../testing/python-env.js";

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The official Python SDKs against the inference surfaces, on a real tiny model: openai-python for
 * chat, legacy completions and the Responses API, anthropic for the Messages API — plain, streamed
 * and with tools (`surfaces_clients.py` does the calls and reports what the SDKs parsed).
 */
describe("the Python SDKs against every inference surface", () => {
  const model = tinyModel("qwen2");
  let server: ChatServer;
  let python: string;

  beforeAll(async () => {
    python = testPython();
    server = await startChatServer("sqlite", { servedModels: { "test/tiny": model.dir } });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
  });

  const drive = async (...sections: string[]): Promise<Record<string, unknown>> => {
    const env = { ...process.env, FLYWHEEL_ROOT_URL: server.baseURL.replace(/\/v1$/, ""), FLYWHEEL_API_KEY: server.app.keys.alice, FLYWHEEL_MODEL: "test/tiny" };
    const { stdout } = await run(python, [path.join(here, "surfaces_clients.py"), ...sections], { env, timeout: 300_000 }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`surfaces_clients.py failed:\n${error.stderr ?? ""}\n${error.stdout ?? ""}`);
    });
    return JSON.parse(stdout.trim().split("\n").pop()!) as Record<string, unknown>;
  };

  it("openai-python: chat with a forced tool, and legacy completions whole, streamed, batched and refused", async () => {
    const summary = await drive("chat", "completions");
    expect(summary.chat_finish_reason).toMatch(/^(stop|length)$/);
    expect(["UTC", "CET"]).toContain((summary.chat_tool_arguments as { zone: string }).zone);
    expect(summary).toMatchObject({
      completion_text_starts_with_prompt: true,
      completion_first_token_logprob: null,
      completion_usage: 5,
      completion_stream_matches: true,
      completion_batch_indexes: [0, 1],
      completion_suffix_error: "suffix is not currently supported",
    });
    expect(summary.completion_logprob_count).toBeGreaterThan(5);
  }, 300_000);

  it("openai-python: responses chained, with a function call and its output, streamed, and refused", async () => {
    const summary = await drive("responses");
    expect(summary.responses_status).toMatch(/^(completed|incomplete)$/);
    expect(summary.responses_stream_text).toBe(summary.responses_output_text);
    expect(["UTC", "CET"]).toContain((summary.responses_call_arguments as { zone: string }).zone);
    expect(summary.responses_stream_call_arguments).toEqual(summary.responses_call_arguments);
    expect(summary).toMatchObject({ responses_chained_input_grew: true, responses_retrieved: true, responses_after_call_output: "response", responses_missing_previous: 404 });
  }, 300_000);

  it("anthropic: messages whole and streamed, a forced tool and its result, errors as the SDK's exceptions", async () => {
    const summary = await drive("messages");
    expect(summary.messages_stop_reason).toMatch(/^(end_turn|max_tokens)$/);
    expect(summary.messages_stream_text).toBe(summary.messages_text);
    expect(summary.messages_stream_stop_reason).toBe(summary.messages_stop_reason);
    expect(summary.messages_output_tokens).toBeGreaterThan(0);
    expect(["UTC", "CET"]).toContain((summary.messages_tool_input as { zone: string }).zone);
    expect(summary.messages_stream_tool_input).toEqual(summary.messages_tool_input);
    expect(["UTC", "CET"]).toContain((summary.messages_structured as { zone: string }).zone);
    expect(summary).toMatchObject({ messages_after_tool_result: "message", messages_not_found: "not_found_error", messages_bad_request: "invalid_request_error" });
  }, 300_000);
});
