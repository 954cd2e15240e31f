import { useState } from "preact/hooks";
import type { MessageView } from "../view/messages.js";
import { describeTokenLogprobs, logprobColor } from "../view/logprob-color.js";

/** A conversation as chat bubbles; sampled choices can show their tokens coloured by logprob. */
export function Chat({ messages, tokens = false }: { messages: MessageView[]; tokens?: boolean }) {
  return (
    <div class="chat">
      {messages.map((message, index) => (
        <div key={index} class={`bubble role-${message.role}${message.sampled ? " sampled" : ""}`}>
          <div class="role">
            {message.role}
            {message.toolCallId && <span class="muted"> → {message.toolCallId}</span>}
            {message.sampled && <span class="muted"> · sampled{message.finishReason ? ` (${message.finishReason})` : ""}</span>}
          </div>
          {tokens && message.tokens ? <Tokens tokens={message.tokens} /> : message.content && <div class="content">{message.content}</div>}
          {message.toolCalls.map((call, callIndex) => (
            <div key={callIndex} class="tool-call">
              <span class="tool-name">{call.name}</span>(<code>{call.arguments}</code>){call.id && <span class="muted"> {call.id}</span>}
            </div>
          ))}
        </div>
      ))}
    </div>
  );
}

/** Tokens coloured by the sampler's logprob; the hovered one's sampler and trainer logprobs show beneath. */
function Tokens({ tokens }: { tokens: NonNullable<MessageView["tokens"]> }) {
  const [hovered, setHovered] = useState<number | undefined>(undefined);
  const token = hovered === undefined ? undefined : tokens[hovered];
  // Hover only adds a detail line: each token's title carries the same text for keyboards and readers.
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: hover highlight only (see above)
    <div class="tokens" data-testid="tokens" onMouseLeave={() => setHovered(undefined)}>
      {tokens.map((token, index) => (
        // biome-ignore lint/a11y/noStaticElementInteractions: hover highlight only (see above)
        <span
          key={index}
          class={`token${index === hovered ? " hovered" : ""}`}
          style={{ background: logprobColor(token.logprob) }}
          title={describeTokenLogprobs(token.logprob, token.trainerLogprob)}
          onMouseEnter={() => setHovered(index)}
        >
          {token.text}
        </span>
      ))}
      {token && (
        <div class="token-tip" role="tooltip" data-testid="token-tip">
          <code>{JSON.stringify(token.text)}</code> {describeTokenLogprobs(token.logprob, token.trainerLogprob).replace("\n", " · ")}
        </div>
      )}
    </div>
  );
}
