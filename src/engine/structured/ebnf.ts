const NAMED_ESCAPES: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** An xgrammar EBNF string literal whose language is exactly `text`. */
export function ebnfLiteral(text: string): string {
  let literal = '"';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (NAMED_ESCAPES[char] !== undefined) literal += NAMED_ESCAPES[char];
    // A raw control character ends the literal for xgrammar's lexer; \xHH is a code point below 0x80.
    else if (code < 0x20 || code === 0x7f) literal += `\\x${code.toString(16).padStart(2, "0")}`;
    else literal += char;
  }
  return `${literal}"`;
}

/** The grammar for `choice` (`docs/api/chat.md#structured-kinds`): the output is exactly one of the strings. */
export function choiceGrammar(choices: readonly string[]): string {
  return `root ::= ${choices.map(ebnfLiteral).join(" | ")}`;
}

/** Whether `text` holds an unpaired UTF-16 surrogate, which no UTF-8 output can ever equal. */
export function hasLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

/**
 * The first character class in an EBNF grammar with a non-ASCII member, or undefined. xgrammar's
 * WASM build matches only the ASCII members of a class correctly (see regex-rewrite.ts), so such a
 * grammar is refused rather than enforced wrongly; string literals of any character work.
 */
export function nonAsciiCharClass(grammar: string): string | undefined {
  let i = 0;
  while (i < grammar.length) {
    const char = grammar[i]!;
    if (char === "#") {
      while (i < grammar.length && grammar[i] !== "\n") i++;
    } else if (char === '"') {
      i++;
      while (i < grammar.length && grammar[i] !== '"' && grammar[i] !== "\n") i += grammar[i] === "\\" ? 2 : 1;
      i++;
    } else if (char === "[") {
      const start = i++;
      let nonAscii = false;
      while (i < grammar.length && grammar[i] !== "]") {
        if (grammar[i] === "\\") {
          const hexEscape = /^\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))/.exec(grammar.slice(i, i + 10));
          const hex = hexEscape?.[1] ?? hexEscape?.[2] ?? hexEscape?.[3];
          if (hex !== undefined && parseInt(hex, 16) >= 0x80) nonAscii = true;
          i += hexEscape ? hexEscape[0].length : 2;
        } else {
          if (grammar.codePointAt(i)! >= 0x80) nonAscii = true;
          i++;
        }
      }
      i++;
      if (nonAscii) return grammar.slice(start, i);
    } else {
      i++;
    }
  }
  return undefined;
}
