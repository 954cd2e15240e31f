import { describe, expect, it } from "vitest";
import { apiErrorOf, asyncApiErrorOf, byteModel, chatRequest, renderWithJinja } from "../../../testing/chat.js";
import { contentText, detectContentFormat, toTemplateMessages, toTemplateTools } from "./messages.js";
import { chatTemplateInput, NO_TEMPLATE_MESSAGE, renderPrompt, responseRole, selectChatTemplate } from "./template.js";

describe("messages for the chat template", () => {
  it("joins text parts with newlines, and renders a string like an equivalent single part", async () => {
    expect(contentText([{ type: "text", text: "a" }, "b", { type: "input_text", text: "c" }])).toBe("a\nb\nc");
    expect(contentText(null)).toBe("");
    const req = chatRequest({
      messages: [
        { role: "user", content: "same" },
        { role: "user", content: [{ type: "text", text: "same" }] },
      ],
    });
    const [a, b] = toTemplateMessages(req.messages, "string");
    expect(a).toEqual(b);
    const [c, d] = toTemplateMessages(req.messages, "openai");
    expect(c).toEqual({ role: "user", content: [{ type: "text", text: "same" }] });
    expect(d).toEqual(c);
  });

  it("detects templates that loop over content parts", async () => {
    expect(detectContentFormat("{% for part in message['content'] %}{{ part.text }}{% endfor %}")).toBe("openai");
    expect(detectContentFormat("{%- for item in msg.content -%}{% endfor %}")).toBe("openai");
    expect(detectContentFormat("{% for message in messages %}{{ message.content }}{% endfor %}")).toBe("string");
  });

  it("prepares assistant tool calls, reasoning, tool results and custom roles as HF templates expect", async () => {
    const req = chatRequest({
      messages: [
        { role: "assistant", content: null, reasoning_content: "think", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"city": "Paris"}' } }] },
        { role: "assistant", content: "x", tool_calls: [{ function: { name: "g", arguments: "" } }, { function: { name: "h", arguments: { a: 1 } } }] },
        { role: "assistant", content: "y", tool_calls: [] },
        {
          role: "tool",
          content: [
            { type: "text", text: "1" },
            { type: "text", text: "2" },
          ],
          tool_call_id: "c1",
          name: "f",
        },
        { role: "narrator", content: "once", reasoning: "ignored for non-assistants" },
      ],
    });
    expect(toTemplateMessages(req.messages, "openai")).toEqual([
      { role: "assistant", content: [], reasoning: "think", reasoning_content: "think", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: { city: "Paris" } } }] },
      {
        role: "assistant",
        content: [{ type: "text", text: "x" }],
        tool_calls: [
          { type: "function", function: { name: "g", arguments: {} } },
          { type: "function", function: { name: "h", arguments: { a: 1 } } },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "y" }] },
      { role: "tool", content: "1\n2", tool_call_id: "c1", name: "f" },
      { role: "narrator", content: [{ type: "text", text: "once" }] },
    ]);
    const bad = chatRequest({ messages: [{ role: "assistant", tool_calls: [{ function: { name: "f", arguments: "{oops" } }] }] });
    expect(apiErrorOf(() => toTemplateMessages(bad.messages, "string"))).toMatchObject({ status: 400, param: "messages", message: expect.stringContaining("messages[0].tool_calls") });
  });

  it("lists tools with null description and parameters when absent", async () => {
    const req = chatRequest({ tools: [{ type: "function", function: { name: "f" } }, { function: { name: "g", description: "d", parameters: { type: "object" }, strict: true } }] });
    expect(toTemplateTools(req.tools)).toEqual([
      { type: "function", function: { name: "f", description: null, parameters: null } },
      { type: "function", function: { name: "g", description: "d", parameters: { type: "object" }, strict: true } },
    ]);
  });
});

describe("chat template input and rendering", () => {
  it("prefers the request's template and needs one from somewhere", async () => {
    const model = { default: "model's", named: {} };
    expect(chatTemplateInput(chatRequest({ chat_template: "mine" }), model).template).toBe("mine");
    expect(chatTemplateInput(chatRequest({}), model).template).toBe("model's");
    const none = { default: undefined, named: {} };
    expect(apiErrorOf(() => chatTemplateInput(chatRequest({}), none))).toEqual({ status: 400, type: "BadRequestError", param: null, message: NO_TEMPLATE_MESSAGE });
    expect(apiErrorOf(() => chatTemplateInput(chatRequest({ chat_template: "" }), model))).toMatchObject({ status: 400, message: NO_TEMPLATE_MESSAGE });
  });

  it("picks the model's tool_use template when tools are sent, and named templates by name (transformers' get_chat_template)", async () => {
    const templates = { default: "plain", named: { tool_use: "with tools", rag: "documents" } };
    const tools = [{ type: "function", function: { name: "f" } }];
    expect(selectChatTemplate(chatRequest({}), templates)).toBe("plain");
    expect(selectChatTemplate(chatRequest({ tools }), templates)).toBe("with tools");
    expect(selectChatTemplate(chatRequest({ tools, tool_choice: "none" }), templates)).toBe("with tools");
    expect(selectChatTemplate(chatRequest({ chat_template: "rag" }), templates)).toBe("documents");
    expect(selectChatTemplate(chatRequest({ chat_template: "tool_use" }), templates)).toBe("with tools");
    expect(selectChatTemplate(chatRequest({ tools }), { default: "plain", named: {} })).toBe("plain");
    expect(selectChatTemplate(chatRequest({ tools }), { default: undefined, named: { tool_use: "with tools" } })).toBe("with tools");
    expect(apiErrorOf(() => selectChatTemplate(chatRequest({}), { default: undefined, named: { tool_use: "with tools" } })).message).toBe(NO_TEMPLATE_MESSAGE);
  });

  it("applies vLLM's variable precedence: kwargs < explicit fields, effort implies enable_thinking", async () => {
    const input = chatTemplateInput(
      chatRequest({
        chat_template_kwargs: { add_generation_prompt: false, documents: [{ title: "k" }], custom: 1 },
        documents: [{ title: "d", text: "t" }],
        reasoning_effort: "low",
      }),
      { default: "t", named: {} },
    );
    expect(input).toMatchObject({ addGenerationPrompt: true, continueFinalMessage: false, documents: [{ title: "d", text: "t" }] });
    expect(input.variables).toEqual({ custom: 1, reasoning_effort: "low", enable_thinking: true });
    expect(chatTemplateInput(chatRequest({ chat_template_kwargs: { documents: [{ title: "k" }] } }), { default: "t", named: {} }).documents).toEqual([{ title: "k" }]);
    expect(chatTemplateInput(chatRequest({ reasoning_effort: "none" }), { default: "t", named: {} }).variables.enable_thinking).toBe(false);
    expect(chatTemplateInput(chatRequest({ reasoning_effort: "high", chat_template_kwargs: { enable_thinking: false } }), { default: "t", named: {} }).variables.enable_thinking).toBe(false);
  });

  it("renders and tokenizes a conversation, adding special tokens only on request", async () => {
    const model = byteModel();
    const req = chatRequest({ messages: [{ role: "user", content: "hello" }], tools: [{ function: { name: "get_weather" } }] });
    const prompt = await renderPrompt(req, model, renderWithJinja);
    expect(prompt.text).toBe("<|im_start|>system\n# Tools\n<tools>\nget_weather\n</tools><|im_end|>\n<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n");
    expect(model.tokenizer.decode(prompt.tokenIds)).toBe(prompt.text);
    expect(prompt.tokenIds[0]).toBe(model.tokenizer.tokenId("<|im_start|>"));
    const thinkingOff = await renderPrompt(chatRequest({ chat_template_kwargs: { enable_thinking: false } }), model, renderWithJinja);
    expect(thinkingOff.text.endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toBe(true);
  });

  it("turns template errors into 400s with the template's message", async () => {
    const model = byteModel();
    const broken = await asyncApiErrorOf(() => renderPrompt(chatRequest({ chat_template: "{% for x in %}" }), model, renderWithJinja));
    expect(broken).toMatchObject({ status: 400, type: "BadRequestError" });
    const raising = await asyncApiErrorOf(() =>
      renderPrompt(chatRequest({ chat_template: "x" }), model, () => {
        throw new Error("Conversation roles must alternate");
      }),
    );
    expect(raising.message).toBe("Conversation roles must alternate");
  });

  it("answers with the assistant after a generation prompt, else with the last message's role", async () => {
    expect(responseRole(chatRequest({}))).toBe("assistant");
    expect(responseRole(chatRequest({ messages: [{ role: "narrator", content: "x" }], add_generation_prompt: false }))).toBe("narrator");
  });
});
