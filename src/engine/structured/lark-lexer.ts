import { LarkConversionError } from "./errors.js";

export type LarkToken =
  | { kind: "name"; name: string; line: number }
  | { kind: "string"; value: string; insensitive: boolean; line: number }
  | { kind: "regexp"; line: number }
  | { kind: "number"; value: number; line: number }
  | { kind: "op"; text: string; line: number }
  | { kind: "directive"; text: string; line: number }
  | { kind: "newline"; line: number };

const OPERATORS = ["->", "..", ":", "|", "(", ")", "[", "]", "*", "+", "?", "~", ".", "!", "{", "}", ","];
const SIMPLE_ESCAPES: Record<string, string> = { "\\": "\\", "'": "'", '"': '"', n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", f: "\f", v: "\v" };

/**
 * Splits a Lark grammar into tokens. Newlines end definitions, except inside brackets; comments
 * (`//` and, as vLLM also strips them, `#`) are dropped; string literals are decoded with Python's
 * escape rules, which is what Lark applies to them.
 */
export function lexLark(text: string): LarkToken[] {
  const tokens: LarkToken[] = [];
  let line = 1;
  let depth = 0;
  let i = 0;
  const atStatementStart = () => tokens.length === 0 || tokens[tokens.length - 1]!.kind === "newline";

  while (i < text.length) {
    const char = text[i]!;
    if (char === "\n") {
      if (depth === 0 && !atStatementStart()) tokens.push({ kind: "newline", line });
      line++;
      i++;
    } else if (char === " " || char === "\t" || char === "\r") {
      i++;
    } else if (char === "#" || text.startsWith("//", i)) {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (char === "%" && atStatementStart()) {
      const end = lineEnd(text, i);
      tokens.push({
        kind: "directive",
        text: text
          .slice(i, end)
          .replace(/(#|\/\/).*$/, "")
          .trim(),
        line,
      });
      i = end;
    } else if (char === '"' || char === "'") {
      const { value, end } = readString(text, i, line);
      const insensitive = text[end] === "i" && !/[A-Za-z0-9_]/.test(text[end + 1] ?? "");
      tokens.push({ kind: "string", value, insensitive, line });
      i = insensitive ? end + 1 : end;
    } else if (char === "/") {
      i = skipRegexp(text, i, line);
      tokens.push({ kind: "regexp", line });
    } else if (/[0-9]/.test(char)) {
      const match = /^[0-9]+/.exec(text.slice(i))![0];
      tokens.push({ kind: "number", value: Number(match), line });
      i += match.length;
    } else if (/[A-Za-z_]/.test(char)) {
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))![0];
      tokens.push({ kind: "name", name: match, line });
      i += match.length;
    } else {
      const op = OPERATORS.find((candidate) => text.startsWith(candidate, i));
      if (!op) throw new LarkConversionError(`line ${line}: unexpected character '${char}'`);
      if (op === "(" || op === "[") depth++;
      if ((op === ")" || op === "]") && depth > 0) depth--;
      tokens.push({ kind: "op", text: op, line });
      i += op.length;
    }
  }
  return tokens;
}

function lineEnd(text: string, from: number): number {
  const end = text.indexOf("\n", from);
  return end < 0 ? text.length : end;
}

function readString(text: string, start: number, line: number): { value: string; end: number } {
  const quote = text[start]!;
  let value = "";
  let i = start + 1;
  for (;;) {
    const char = text[i];
    if (char === undefined || char === "\n") throw new LarkConversionError(`line ${line}: unterminated string literal`);
    if (char === quote) return { value, end: i + 1 };
    if (char !== "\\") {
      value += char;
      i++;
      continue;
    }
    const escaped = text[i + 1];
    if (escaped === undefined) throw new LarkConversionError(`line ${line}: unterminated string literal`);
    if (SIMPLE_ESCAPES[escaped] !== undefined) {
      value += SIMPLE_ESCAPES[escaped];
      i += 2;
      continue;
    }
    const width = escaped === "x" ? 2 : escaped === "u" ? 4 : escaped === "U" ? 8 : 0;
    if (width > 0) {
      const hex = text.slice(i + 2, i + 2 + width);
      const code = /^[0-9a-fA-F]+$/.test(hex) && hex.length === width ? parseInt(hex, 16) : NaN;
      if (!(code <= 0x10ffff)) throw new LarkConversionError(`line ${line}: invalid escape \\${escaped}${hex}`);
      value += String.fromCodePoint(code);
      i += 2 + width;
      continue;
    }
    const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1));
    if (octal) {
      value += String.fromCodePoint(parseInt(octal[0], 8));
      i += 1 + octal[0].length;
      continue;
    }
    // Python keeps the backslash of an unknown escape.
    value += `\\${escaped}`;
    i += 2;
  }
}

function skipRegexp(text: string, start: number, line: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== "\n") {
    if (text[i] === "\\") i += 2;
    else if (text[i] === "/") return i + 1 + /^[imslux]*/.exec(text.slice(i + 1))![0].length;
    else i++;
  }
  throw new LarkConversionError(`line ${line}: unterminated regular expression`);
}
