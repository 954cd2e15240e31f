import { renderChatTemplate } from "../chat-template.js";
import { DIGIT_SPLIT_PATTERN } from "../fixtures/bpe-trainer.js";
import { CHATML_TEMPLATE } from "../fixtures/chatml-template.js";
import { FIXTURE_ADDED_TOKENS, type FixtureTokenizerFiles, fixtureTokenizerFiles } from "../fixtures/tokenizer-files.js";
import type { TinyChatExample } from "./examples.js";

/** A conversation rendered with tiny-chat's template (ChatML with Hermes tools and `<think>`). */
export function renderExample(example: Pick<TinyChatExample, "messages" | "tools">, addGenerationPrompt = false): string {
  return renderChatTemplate(CHATML_TEMPLATE, { messages: example.messages as Record<string, unknown>[], tools: example.tools ?? null, addGenerationPrompt });
}

/**
 * tiny-chat's tokenizer files: a byte-level BPE of `bpeVocabSize` pieces trained on the rendered
 * training conversations (the ChatML and tool tokens cut out first: they are added tokens), with
 * Qwen2's digit-by-digit pre-tokenizer, then the ChatML, think and tool tokens on top.
 */
export function tinyChatTokenizerFiles(examples: readonly TinyChatExample[], bpeVocabSize: number, maxLength: number): FixtureTokenizerFiles {
  const addedTokens = new RegExp(FIXTURE_ADDED_TOKENS.map(({ content }) => content.replace(/[|/]/g, "\\$&")).join("|"), "g");
  const corpus = examples.map((example) => renderExample(example).replace(addedTokens, "\n")).join("\n");
  return fixtureTokenizerFiles({ bpeVocabSize, corpus, splitPattern: DIGIT_SPLIT_PATTERN, withBos: false, maxLength });
}
