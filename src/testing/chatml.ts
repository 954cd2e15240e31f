import type { ChatRenderOptions } from "../engine/train/chat-render.js";
import type { ChatMessage, ChatTool } from "../engine/train/trajectory.js";

/**
 * A ChatML (Qwen/Hermes-style) chat template written as plain string building, for trainer tests
 * that need a renderer without a model: tools in the system turn, tool calls as <tool_call> blocks,
 * tool results as user turns, and (with `thinking`) Qwen3's empty think block when
 * `enable_thinking` is false. `source` stands in for the template text that convention detection
 * reads.
 */
export interface ChatmlTemplate {
  source: string;
  render(messages: ChatMessage[], tools: ChatTool[] | undefined, options: ChatRenderOptions): string;
}

export function chatmlTemplate(features: { thinking?: boolean; toolArgumentItems?: boolean } = {}): ChatmlTemplate {
  const source = [
    "{%- for message in messages %}<|im_start|>{{ message.role }}",
    features.thinking ? "{%- if enable_thinking is false %}<think>\n\n</think>\n\n{%- endif %}" : "",
    features.toolArgumentItems ? "{%- for k, v in tool_call.arguments|items %}{%- endfor %}" : "{{ tool_call.arguments }}",
  ].join("");
  const emptyThink = (options: ChatRenderOptions) => (features.thinking && options.templateKwargs.enable_thinking === false ? "<think>\n\n</think>\n\n" : "");
  return {
    source,
    render(messages, tools, options) {
      let out = "";
      let rest = messages;
      if (tools && tools.length > 0) {
        const system = messages[0]?.role === "system" ? `${String(messages[0].content)}\n\n` : "";
        if (system) rest = messages.slice(1);
        out += `<|im_start|>system\n${system}# Tools\n<tools>\n${tools.map((tool) => JSON.stringify(tool)).join("\n")}\n</tools><|im_end|>\n`;
      }
      for (const message of rest) {
        if (message.role === "tool") {
          out += `<|im_start|>user\n<tool_response>\n${String(message.content)}\n</tool_response><|im_end|>\n`;
          continue;
        }
        let body = String(message.content ?? "");
        if (message.role === "assistant") {
          body = emptyThink(options) + body;
          for (const call of message.tool_calls ?? []) {
            const args = typeof call.function.arguments === "string" ? call.function.arguments : JSON.stringify(call.function.arguments);
            body += `\n<tool_call>\n{"name": "${call.function.name}", "arguments": ${args}}\n</tool_call>`;
          }
        }
        out += `<|im_start|>${message.role}\n${body}<|im_end|>\n`;
      }
      if (options.continueFinalMessage && out.endsWith("<|im_end|>\n")) out = out.slice(0, -"<|im_end|>\n".length);
      if (options.addGenerationPrompt) out += `<|im_start|>assistant\n${emptyThink(options)}`;
      return out;
    },
  };
}
