import { describe, expect, it } from "vitest";
import { TrainingInputError } from "./errors.js";
import { completionsExchange, messagesExchange, responsesExchange } from "./exchange-kinds.js";
import { exactChoiceTokenIds, historiesOf } from "./trajectory.js";

/** The other APIs' captures, read as the Chat Completions exchange each amounts to. */
describe("exchanges of the other APIs", () => {
  it("reads a completions exchange as exact prompt and sampled ids, with the sampled logprobs", () => {
    const exchange = {
      request: { model: "m", prompt: "Hi", return_token_ids: true },
      response: {
        choices: [{ index: 0, text: "ab", token_ids: [7, 8], prompt_token_ids: [1, 2, 3], logprobs: { tokens: ["a", "b"], token_logprobs: [-0.5, -1.5], top_logprobs: [], text_offset: [0, 1] }, finish_reason: "length" }],
      },
    };
    const [history] = historiesOf({ messages_and_choices: [], exchanges: { completions: [exchange] } }, ["t"]);
    expect(history!.history.exchange).toEqual({ prompt_token_ids: [1, 2, 3] });
    const choice = history!.history.messages_and_choices.at(-1) as Parameters<typeof exactChoiceTokenIds>[0];
    expect(exactChoiceTokenIds(choice)).toEqual([7, 8]);
    expect(choice.logprobs!.content!.map((entry) => entry.logprob)).toEqual([-0.5, -1.5]);
    expect(history!.loc).toEqual(["t", "exchanges", "completions", 0]);
    // Token-id prompts stand for themselves; `token_id:<N>` logprob tokens give the sampled ids.
    const byPrompt = completionsExchange({ request: { prompt: [4, 5] }, response: { choices: [{ text: "x", logprobs: { tokens: ["token_id:9"], token_logprobs: [-2] } }] } }, []);
    expect(byPrompt.response.prompt_token_ids).toEqual([4, 5]);
    expect(byPrompt.response.choices[0]!.token_ids).toEqual([9]);
  });

  it("refuses completions exchanges it cannot train exactly, naming where", () => {
    expect(() => completionsExchange({ request: { prompt: "x" }, response: { choices: [{ text: "a", token_ids: [1] }] } }, ["e"])).toThrow(/^e\.response\.choices\.0\.prompt_token_ids: .*return_token_ids/);
    expect(() => completionsExchange({ request: { prompt: [1] }, response: { choices: [{ text: "a" }] } }, ["e"])).toThrow(/^e\.response\.choices\.0\.token_ids/);
    expect(() => completionsExchange({ request: { prompt: [1], echo: true }, response: { choices: [] } }, ["e"])).toThrow(TrainingInputError);
  });

  it("reads a Responses exchange: instructions, items and function calls as chat messages, output as the choice", () => {
    const converted = responsesExchange(
      {
        request: {
          instructions: "Be brief.",
          input: [
            { role: "developer", content: "Rules" },
            { role: "user", content: [{ type: "input_text", text: "Time?" }] },
            { type: "function_call", call_id: "c1", name: "get_time", arguments: '{"zone":"UTC"}' },
            { type: "function_call_output", call_id: "c1", output: "12:00" },
          ],
          tools: [{ type: "function", name: "get_time", parameters: { type: "object" } }],
        },
        response: { status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: "Noon." }] }], prompt_token_ids: [1, 2], token_ids: [3], logprobs: [-0.25] },
      },
      [],
    );
    expect(converted.request.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "system", content: "Rules" },
      { role: "user", content: "Time?" },
      { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "get_time", arguments: '{"zone":"UTC"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "12:00" },
    ]);
    expect(converted.request.tools).toEqual([{ type: "function", function: { name: "get_time", description: null, parameters: { type: "object" } } }]);
    expect(converted.response.prompt_token_ids).toEqual([1, 2]);
    expect(converted.response.choices[0]).toMatchObject({ message: { role: "assistant", content: "Noon." }, token_ids: [3], logprobs: { content: [{ token: "token_id:3", logprob: -0.25 }] } });
  });

  it("reads a Messages exchange: system, tool_use and tool_result blocks; without ids the choice has no logprobs", () => {
    const converted = messagesExchange(
      {
        request: {
          system: [{ type: "text", text: "Be brief." }],
          messages: [
            { role: "user", content: "Time?" },
            { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "get_time", input: { zone: "UTC" } }] },
            {
              role: "user",
              content: [
                { type: "tool_result", tool_use_id: "t1", content: "12:00" },
                { type: "text", text: "So?" },
              ],
            },
          ],
          tools: [{ name: "get_time", input_schema: { type: "object" } }],
        },
        response: { content: [{ type: "text", text: "Noon." }], stop_reason: "end_turn" },
      },
      [],
    );
    expect(converted.request.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Time?" },
      { role: "assistant", content: "", tool_calls: [{ id: "t1", type: "function", function: { name: "get_time", arguments: '{"zone":"UTC"}' } }] },
      { role: "tool", tool_call_id: "t1", content: "12:00" },
      { role: "user", content: "So?" },
    ]);
    expect(converted.response.choices[0]).toMatchObject({ message: { content: "Noon." }, logprobs: null, finish_reason: "stop" });
    expect(converted.response.prompt_token_ids).toBeNull();
  });
});
