/**
 * A structured-output constraint (`docs/api/chat.md#structured-outputs`), compiled by xgrammar into a token mask.
 * Exactly one kind per request; `response_format` and forced tool choices map onto these.
 */
export type StructuredConstraint =
  | { kind: "json_schema"; schema: Record<string, unknown> | boolean; options?: JsonGrammarOptions }
  | { kind: "json_object"; options?: JsonGrammarOptions }
  | { kind: "regex"; pattern: string }
  | { kind: "choice"; choices: string[] }
  | { kind: "grammar"; grammar: string }
  | { kind: "structural_tag"; spec: string };

export interface JsonGrammarOptions {
  disableAnyWhitespace?: boolean;
  disableAdditionalProperties?: boolean;
  whitespacePattern?: string;
}
