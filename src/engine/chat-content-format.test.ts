import { describe, expect, it } from "vitest";
import { detectContentFormat } from "./chat-content-format.js";
import { CHATML_TEMPLATE } from "./fixtures/chatml-template.js";

describe("detectContentFormat", () => {
  it("is 'string' for templates that print the content", () => {
    expect(detectContentFormat(CHATML_TEMPLATE)).toBe("string");
    expect(detectContentFormat("{% for m in messages %}{{ m['content'] }}{% endfor %}")).toBe("string");
    expect(detectContentFormat("{% for m in messages %}{% for c in m.tool_calls %}{{ c }}{% endfor %}{% endfor %}")).toBe("string");
  });

  it("is 'openai' for templates that loop over the content parts", () => {
    expect(detectContentFormat("{% for message in messages %}{% for part in message['content'] %}{{ part.text }}{% endfor %}{% endfor %}")).toBe("openai");
    expect(detectContentFormat("{% for m in messages[1:] %}{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content | selectattr('type', 'equalto', 'text') %}{{ p.text }}{% endfor %}{% endif %}{% endfor %}")).toBe("openai");
    expect(detectContentFormat("{% set chat = messages %}{% for m in chat %}{% set parts = m.content %}{% for p in parts %}{{ p.text }}{% endfor %}{% endfor %}")).toBe("openai");
  });

  it("treats a template that does not parse as 'string'", () => {
    expect(detectContentFormat("{% for %}")).toBe("string");
  });
});
