import { describe, expect, it } from "vitest";
import { loadTinyModel } from "../testing/models.js";
import { ChatTemplateError, MISSING_TEMPLATE_MESSAGE, renderChatTemplate, resolveChatTemplate } from "./chat-template.js";
import { CHATML_TEMPLATE } from "./fixtures/chatml-template.js";
import { strftime } from "./strftime.js";

const tools = [
  {
    type: "function",
    function: { name: "get_weather", description: "Weather for a city.", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
  },
];

function errorOf(action: () => unknown): ChatTemplateError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ChatTemplateError);
    return error as ChatTemplateError;
  }
  throw new Error("expected a ChatTemplateError");
}

describe("the fixture ChatML template", () => {
  it("renders a plain conversation with the generation prompt", () => {
    const rendered = renderChatTemplate(CHATML_TEMPLATE, {
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
      addGenerationPrompt: true,
    });
    expect(rendered).toBe("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    expect(renderChatTemplate(CHATML_TEMPLATE, { messages: [{ role: "user", content: "Hi" }] })).toBe("<|im_start|>user\nHi<|im_end|>\n");
  });

  it("renders tools, reasoning, tool calls and grouped tool results", () => {
    const rendered = renderChatTemplate(CHATML_TEMPLATE, {
      tools,
      addGenerationPrompt: true,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather in Zürich and Oslo?" },
        {
          role: "assistant",
          content: "",
          reasoning_content: "Two cities.",
          tool_calls: [
            { id: "a", type: "function", function: { name: "get_weather", arguments: '{"city": "Zürich"}' } },
            { id: "b", type: "function", function: { name: "get_weather", arguments: { city: "Oslo" } } },
          ],
        },
        { role: "tool", tool_call_id: "a", content: "18 C" },
        { role: "tool", tool_call_id: "b", content: "9 C" },
        { role: "assistant", content: "Zürich 18 C, Oslo 9 C." },
      ],
    });
    expect(rendered).toBe(
      [
        "<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call the functions whose signatures are listed inside <tools></tools>:\n<tools>",
        '{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}',
        "</tools>\n\nTo call a function, answer with a JSON object holding its name and arguments inside <tool_call></tool_call> tags:\n<tool_call>",
        '{"name": <function-name>, "arguments": <arguments-object>}',
        "</tool_call><|im_end|>",
        "<|im_start|>user\nWeather in Zürich and Oslo?<|im_end|>",
        "<|im_start|>assistant\n<think>\nTwo cities.\n</think>\n\n<tool_call>",
        '{"name": "get_weather", "arguments": {"city": "Zürich"}}',
        "</tool_call>\n<tool_call>",
        '{"name": "get_weather", "arguments": {"city": "Oslo"}}',
        "</tool_call><|im_end|>",
        "<|im_start|>user\n<tool_response>\n18 C\n</tool_response>\n<tool_response>\n9 C\n</tool_response><|im_end|>",
        "<|im_start|>assistant\nZürich 18 C, Oslo 9 C.<|im_end|>",
        "<|im_start|>assistant\n",
      ].join("\n"),
    );
  });

  it("switches thinking off through chat_template_kwargs or reasoning_effort", () => {
    const messages = [{ role: "user", content: "Hi" }];
    const empty = "<|im_start|>assistant\n<think>\n\n</think>\n\n";
    expect(renderChatTemplate(CHATML_TEMPLATE, { messages, addGenerationPrompt: true, kwargs: { enable_thinking: false } })).toMatch(new RegExp(`${empty}$`));
    expect(renderChatTemplate(CHATML_TEMPLATE, { messages, addGenerationPrompt: true, reasoningEffort: "none" })).toMatch(new RegExp(`${empty}$`));
    expect(renderChatTemplate(CHATML_TEMPLATE, { messages, addGenerationPrompt: true, reasoningEffort: "low" })).toMatch(/assistant\n$/);
    expect(renderChatTemplate(CHATML_TEMPLATE, { messages, addGenerationPrompt: true, reasoningEffort: "none", kwargs: { enable_thinking: true } })).toMatch(/assistant\n$/);
  });

  it("tokenizes to the fixture's special tokens", () => {
    const model = loadTinyModel("qwen2");
    const rendered = renderChatTemplate(model.chatTemplates.default!, { messages: [{ role: "user", content: "Hi" }], addGenerationPrompt: true });
    const ids = model.tokenizer.encode(rendered);
    expect(ids[0]).toBe(model.tokenizer.tokenId("<|im_start|>"));
    expect(ids.filter((id) => id === model.tokenizer.tokenId("<|im_end|>"))).toHaveLength(1);
    expect(model.tokenizer.decode(ids)).toBe(rendered);
  });
});

describe("continue_final_message", () => {
  const prefix = [{ role: "user", content: "Count." }];

  it("leaves the final message open, cutting the template's end of turn", () => {
    const rendered = renderChatTemplate(CHATML_TEMPLATE, { messages: [...prefix, { role: "assistant", content: "One, two," }], continueFinalMessage: true });
    expect(rendered).toBe("<|im_start|>user\nCount.<|im_end|>\n<|im_start|>assistant\nOne, two,");
  });

  it("keeps trailing whitespace only where the template kept it", () => {
    const kept = renderChatTemplate(CHATML_TEMPLATE, { messages: [...prefix, { role: "assistant", content: "One, two, " }], continueFinalMessage: true });
    expect(kept.endsWith("assistant\nOne, two, ")).toBe(true);
    const trimming = "{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}</{{ m.role }}>{% endfor %}";
    expect(renderChatTemplate(trimming, { messages: [{ role: "assistant", content: "  Hello  " }], continueFinalMessage: true })).toBe("<assistant>Hello");
  });

  it("continues the last text part of list content", () => {
    const template = "{% for m in messages %}{% for p in m.content %}[{{ p.text }}]{% endfor %}{% endfor %}";
    const messages = [
      {
        role: "assistant",
        content: [
          { type: "text", text: "first" },
          { type: "text", text: "second" },
        ],
      },
    ];
    expect(renderChatTemplate(template, { messages, continueFinalMessage: true })).toBe("[first][second");
  });

  it("reports what transformers reports", () => {
    const both = errorOf(() => renderChatTemplate(CHATML_TEMPLATE, { messages: prefix, continueFinalMessage: true, addGenerationPrompt: true }));
    expect(both.kind).toBe("continue_final_message");
    expect(both.message).toMatch(/^continue_final_message and add_generation_prompt are not compatible/);
    const dropped = errorOf(() => renderChatTemplate("{% for m in messages %}{{ m.role }}{% endfor %}", { messages: [{ role: "assistant", content: "xyz" }], continueFinalMessage: true }));
    expect(dropped.message).toMatch(/^continue_final_message is set but the final message does not appear in the chat after applying the chat template!/);
    const noText = errorOf(() => renderChatTemplate(CHATML_TEMPLATE, { messages: [{ role: "assistant", content: [{ type: "image_url" }] }], continueFinalMessage: true }));
    expect(noText.message).toBe("continue_final_message is set but we could not find any text to continue in the final message!");
  });
});

describe("template variables and helpers", () => {
  it("passes the tokenizer's special tokens", () => {
    const llama = loadTinyModel("llama");
    const rendered = renderChatTemplate("{{ bos_token }}|{{ eos_token }}|{{ pad_token }}|{{ additional_special_tokens | length }}", { messages: [], specialTokens: llama.templateSpecialTokens });
    expect(rendered).toBe("<|begin_of_text|>|<|im_end|>|<|endoftext|>|2");
  });

  it("resolves precedence: special tokens < server defaults < tools < request kwargs < explicit fields", () => {
    const template = "{{ eos_token }}|{{ x }}|{{ y }}|{{ tools | length }}|{{ add_generation_prompt }}|{{ documents[0].title }}";
    const rendered = renderChatTemplate(template, {
      messages: [],
      specialTokens: { eos_token: "<e>" },
      defaultKwargs: { x: "server", y: "server", eos_token: "<server>" },
      tools,
      kwargs: { y: "request", tools: [1, 2, 3], add_generation_prompt: false },
      addGenerationPrompt: true,
      documents: [{ title: "Doc", text: "…" }],
    });
    expect(rendered).toBe("<server>|server|request|3|true|Doc");
  });

  it("defines tools and documents as none when absent, as transformers does (Mistral-style `is not none` guards)", () => {
    const template = "{% if tools is not none %}{% for t in tools %}({{ t }}){% endfor %}{% else %}no tools{% endif %}|{{ documents is none }}|{{ tools is defined }}";
    expect(renderChatTemplate(template, { messages: [] })).toBe("no tools|true|true");
    expect(renderChatTemplate(template, { messages: [], tools: ["a"], documents: [{ title: "d" }] })).toBe("(a)|false|true");
  });

  it("turns raise_exception into an error carrying its message", () => {
    const error = errorOf(() => renderChatTemplate(CHATML_TEMPLATE, { messages: [{ role: "robot", content: "beep" }] }));
    expect(error.kind).toBe("raised");
    expect(error.message).toBe("Unexpected message role: robot");
    const late = errorOf(() =>
      renderChatTemplate(CHATML_TEMPLATE, {
        messages: [
          { role: "user", content: "a" },
          { role: "system", content: "b" },
        ],
      }),
    );
    expect(late.message).toBe("A system message may only come first.");
  });

  it("reports templates that do not parse or fail while rendering", () => {
    expect(errorOf(() => renderChatTemplate("{% if %}", { messages: [] })).kind).toBe("syntax");
    const runtime = errorOf(() => renderChatTemplate("{{ missing_function() }}", { messages: [] }));
    expect(runtime.kind).toBe("render");
    expect(runtime.message).toMatch(/^The chat template could not be rendered: /);
  });

  it("offers strftime_now, range, loop controls, namespaces and the generation tag", () => {
    const today = strftime(new Date(), "%Y-%m-%d");
    expect(renderChatTemplate("{{ strftime_now('%Y-%m-%d') }}", { messages: [] })).toBe(today);
    expect(renderChatTemplate("{% for i in range(1, 7, 2) %}{% if i == 3 %}{% continue %}{% endif %}{{ i }}{% endfor %}", { messages: [] })).toBe("15");
    expect(renderChatTemplate("{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}", { messages: [{}, {}] })).toBe("2");
    expect(renderChatTemplate("{% generation %}kept{% endgeneration %}", { messages: [] })).toBe("kept");
    expect(renderChatTemplate("{{ x | tojson }}|{{ x | tojson(indent=2) }}", { messages: [], kwargs: { x: { a: [1, "é"] } } })).toBe('{"a": [1, "é"]}|{\n  "a": [\n    1,\n    "é"\n  ]\n}');
  });
});

describe("resolveChatTemplate", () => {
  const templates = { default: "D", named: { tool_use: "U", rag: "R" } };

  it("picks tool_use with tools, a named template, a literal template or the default", () => {
    expect(resolveChatTemplate(templates)).toBe("D");
    expect(resolveChatTemplate(templates, { hasTools: true })).toBe("U");
    expect(resolveChatTemplate({ default: "D", named: {} }, { hasTools: true })).toBe("D");
    expect(resolveChatTemplate(templates, { requested: "rag" })).toBe("R");
    expect(resolveChatTemplate(templates, { requested: "default", hasTools: true })).toBe("D");
    expect(resolveChatTemplate(templates, { requested: "{{ 1 }}" })).toBe("{{ 1 }}");
  });

  it("refuses to invent a template", () => {
    const error = errorOf(() => resolveChatTemplate({ default: undefined, named: {} }));
    expect(error.kind).toBe("missing");
    expect(error.message).toBe(MISSING_TEMPLATE_MESSAGE);
  });
});

describe("strftime", () => {
  it("formats the directives chat templates use", () => {
    const date = new Date(2024, 2, 5, 15, 4, 9);
    expect(strftime(date, "%d %b %Y")).toBe("05 Mar 2024");
    expect(strftime(date, "%-d %B %y, %A %a")).toBe("5 March 24, Tuesday Tue");
    expect(strftime(date, "%H:%M:%S %I%p %j %F %% %Q")).toBe("15:04:09 03PM 065 2024-03-05 % %Q");
  });
});
