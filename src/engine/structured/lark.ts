/*
 * Lark grammars for `structured_outputs.grammar` (`docs/api/chat.md#structured-kinds`): a grammar with no `::=` line
 * is read as Lark and converted to xgrammar's EBNF.
 *
 * The conversion keeps the language exactly, under Lark's Earley parser (the default, which matches
 * characters against the whole grammar rather than running a separate lexer). Supported: rules and
 * terminals (`name:`/`NAME:`, with `?`/`!`/`_` prefixes and `.priority`), `|` on continuation lines,
 * string literals (`"..."`, `'...'`, the `i` flag), ranges (`"a".."z"`), groups, `[optional]`,
 * `? * +`, `~ n` and `~ n..m`, aliases (`-> name`, dropped), and `%import common.X` for common
 * terminals. Regular-expression terminals (`/.../`), `%ignore` (which needs a lexer), templates and
 * other directives are refused with the reason, rather than converted into a different language.
 */

import { ebnfLiteral } from "./ebnf.js";
import { LarkConversionError } from "./errors.js";
import { lexLark, type LarkToken } from "./lark-lexer.js";

/** vLLM's test: a grammar is Lark unless some line (comments removed) contains `::=`. */
export function looksLikeLark(grammar: string): boolean {
  return !grammar.split("\n").some((line) => line.replace(/(#|\/\/).*$/, "").includes("::="));
}

type Expr =
  | { type: "alt"; options: Expr[] }
  | { type: "seq"; items: Expr[] }
  | { type: "name"; name: string; line: number }
  | { type: "literal"; value: string; insensitive: boolean }
  | { type: "range"; from: string; to: string }
  | { type: "repeat"; item: Expr; suffix: string };

/** Converts a Lark grammar to xgrammar EBNF whose root is `start` (or else the first rule). */
export function larkToEbnf(grammar: string): string {
  const parser = new LarkParser(lexLark(grammar));
  const { rules, imports } = parser.parseGrammar();
  if (rules.size === 0 && imports.size === 0) throw new LarkConversionError("no rules found");
  const names = new EbnfNames([...rules.keys(), ...imports.keys()]);
  const start = rules.has("start") ? "start" : [...rules.keys()][0];
  if (start === undefined) throw new LarkConversionError("the grammar defines terminals only, no rule to start from");

  for (const [, body] of rules) checkReferences(body, rules, imports);
  const lines = [`root ::= ${names.of(start)}`];
  for (const [name, body] of rules) lines.push(`${names.of(name)} ::= ${render(body, names)}`);
  for (const [name, common] of imports) lines.push(`${names.of(name)} ::= ${COMMON_TERMINALS[common]}`);
  return lines.join("\n");
}

class LarkParser {
  private position = 0;
  readonly rules = new Map<string, Expr>();
  readonly imports = new Map<string, string>();

  constructor(private readonly tokens: LarkToken[]) {}

  parseGrammar(): { rules: Map<string, Expr>; imports: Map<string, string> } {
    for (;;) {
      while (this.peek()?.kind === "newline") this.position++;
      const token = this.peek();
      if (!token) break;
      if (token.kind === "directive") {
        this.position++;
        this.directive(token.text, token.line);
      } else {
        this.definition();
      }
    }
    return { rules: this.rules, imports: this.imports };
  }

  private definition(): void {
    let token = this.next();
    if (token?.kind === "op" && (token.text === "?" || token.text === "!")) token = this.next();
    if (token?.kind !== "name") throw this.error(token, "expected a rule name at the start of a definition");
    const name = token.name;
    if (this.peekOp(".")) {
      this.position++;
      if (this.next()?.kind !== "number") throw this.error(token, "expected a number after '.' (a priority)");
    }
    if (this.peekOp("{")) throw this.error(token, "templates (rule{args}) are not supported");
    const colon = this.next();
    if (colon?.kind !== "op" || colon.text !== ":") throw this.error(colon ?? token, `expected ':' after '${name}'`);
    if (this.rules.has(name) || this.imports.has(name)) throw this.error(token, `'${name}' is defined twice`);
    this.rules.set(name, this.alternatives(true));
    const end = this.next();
    if (end && end.kind !== "newline") throw this.error(end, `unexpected ${describe(end)}`);
  }

  private directive(text: string, line: number): void {
    const match = /^%import\s+common\s*(?:\.\s*([A-Z_][A-Z0-9_]*)(?:\s*->\s*([A-Za-z_][A-Za-z0-9_]*))?|\(([^)]*)\))\s*$/.exec(text);
    if (!match) {
      const what = text.startsWith("%ignore") ? "%ignore needs a lexer and cannot be expressed as a grammar" : `unsupported directive '${text.split(/\s/)[0]}'`;
      throw new LarkConversionError(`line ${line}: ${what}`);
    }
    const entries = match[3] !== undefined ? match[3].split(",").map((name) => [name.trim(), name.trim()]) : [[match[1]!, match[2] ?? match[1]!]];
    for (const [common, alias] of entries) {
      if (!COMMON_TERMINALS[common!]) throw new LarkConversionError(`line ${line}: common.${common} is not one of the supported common terminals (${Object.keys(COMMON_TERMINALS).join(", ")})`);
      if (this.rules.has(alias!) || this.imports.has(alias!)) throw new LarkConversionError(`line ${line}: '${alias}' is defined twice`);
      this.imports.set(alias!, common!);
    }
  }

  /** `a | b | c`; at the top level of a definition, `|` may open a continuation line. */
  private alternatives(topLevel: boolean): Expr {
    const options = [this.sequence()];
    for (;;) {
      if (topLevel) {
        let ahead = this.position;
        while (this.tokens[ahead]?.kind === "newline") ahead++;
        const next = this.tokens[ahead];
        if (next?.kind !== "op" || next.text !== "|") break;
        this.position = ahead;
      } else if (!this.peekOp("|")) {
        break;
      }
      this.position++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0]! : { type: "alt", options };
  }

  private sequence(): Expr {
    const items: Expr[] = [];
    for (;;) {
      const token = this.peek();
      if (!token || token.kind === "newline" || (token.kind === "op" && ["|", ")", "]"].includes(token.text))) break;
      if (token.kind === "op" && token.text === "->") {
        this.position++;
        if (this.next()?.kind !== "name") throw this.error(token, "expected a name after '->'");
        break;
      }
      items.push(this.repetition());
    }
    return items.length === 1 ? items[0]! : { type: "seq", items };
  }

  private repetition(): Expr {
    const item = this.atom();
    const token = this.peek();
    if (token?.kind !== "op") return item;
    if (token.text === "?" || token.text === "*" || token.text === "+") {
      this.position++;
      return { type: "repeat", item, suffix: token.text };
    }
    if (token.text !== "~") return item;
    this.position++;
    const low = this.next();
    if (low?.kind !== "number") throw this.error(token, "expected a count after '~'");
    if (!this.peekOp("..")) return { type: "repeat", item, suffix: `{${low.value}}` };
    this.position++;
    const high = this.next();
    if (high?.kind !== "number" || high.value < low.value) throw this.error(token, "expected 'n..m' with n <= m after '~'");
    return { type: "repeat", item, suffix: `{${low.value},${high.value}}` };
  }

  private atom(): Expr {
    const token = this.next();
    if (!token) throw new LarkConversionError("unexpected end of grammar");
    if (token.kind === "name") return { type: "name", name: token.name, line: token.line };
    if (token.kind === "regexp") throw this.error(token, "regular-expression terminals (/.../) are not supported; write them with strings, ranges and repetition");
    if (token.kind === "string") {
      if (!this.peekOp("..")) return { type: "literal", value: token.value, insensitive: token.insensitive };
      this.position++;
      const to = this.next();
      if (to?.kind !== "string" || [...token.value].length !== 1 || [...to.value].length !== 1) {
        throw this.error(token, 'a range must join two one-character strings, like "a".."z"');
      }
      return { type: "range", from: token.value, to: to.value };
    }
    if (token.kind === "op" && (token.text === "(" || token.text === "[")) {
      const inner = this.alternatives(false);
      const close = this.next();
      const expected = token.text === "(" ? ")" : "]";
      if (close?.kind !== "op" || close.text !== expected) throw this.error(close ?? token, `expected '${expected}'`);
      return token.text === "(" ? inner : { type: "repeat", item: inner, suffix: "?" };
    }
    throw this.error(token, `unexpected ${describe(token)}`);
  }

  private peek(): LarkToken | undefined {
    return this.tokens[this.position];
  }

  private peekOp(text: string): boolean {
    const token = this.peek();
    return token?.kind === "op" && token.text === text;
  }

  private next(): LarkToken | undefined {
    return this.tokens[this.position++];
  }

  private error(token: LarkToken | undefined, message: string): LarkConversionError {
    return new LarkConversionError(token ? `line ${token.line}: ${message}` : message);
  }
}

function checkReferences(expr: Expr, rules: Map<string, Expr>, imports: Map<string, string>): void {
  switch (expr.type) {
    case "name":
      if (!rules.has(expr.name) && !imports.has(expr.name)) throw new LarkConversionError(`line ${expr.line}: '${expr.name}' is not defined`);
      return;
    case "alt":
      return expr.options.forEach((option) => checkReferences(option, rules, imports));
    case "seq":
      return expr.items.forEach((item) => checkReferences(item, rules, imports));
    case "repeat":
      return checkReferences(expr.item, rules, imports);
    default:
      return;
  }
}

function render(expr: Expr, names: EbnfNames): string {
  switch (expr.type) {
    case "alt":
      return expr.options.map((option) => render(option, names)).join(" | ");
    case "seq":
      return expr.items.length === 0 ? '""' : expr.items.map((item) => renderUnit(item, names)).join(" ");
    case "name":
      return names.of(expr.name);
    case "literal":
      return expr.insensitive ? caseInsensitive(expr.value) : ebnfLiteral(expr.value);
    case "range":
      return renderRange(expr.from, expr.to);
    case "repeat":
      return `${renderUnit(expr.item, names)}${expr.suffix}`;
  }
}

/** `render`, parenthesised unless it is already one unit. */
function renderUnit(expr: Expr, names: EbnfNames): string {
  const text = render(expr, names);
  const single = expr.type === "name" || expr.type === "range" || (expr.type === "literal" && !expr.insensitive);
  return single ? text : `(${text})`;
}

/**
 * `"a".."z"` as a class; a range reaching past ASCII as a choice of literals instead, because
 * xgrammar's WASM build matches non-ASCII class members wrongly (see regex-rewrite.ts).
 */
function renderRange(from: string, to: string): string {
  const low = from.codePointAt(0)!;
  const high = to.codePointAt(0)!;
  if (high < 0x80) return `[${classChar(from)}-${classChar(to)}]`;
  if (high - low >= 256) throw new LarkConversionError(`the range "${from}".."${to}" reaches past ASCII and has more than 256 characters`);
  const literals: string[] = [];
  for (let code = low; code <= high; code++) if (code < 0xd800 || code > 0xdfff) literals.push(ebnfLiteral(String.fromCodePoint(code)));
  return `(${literals.join(" | ")})`;
}

function caseInsensitive(value: string): string {
  if (value === "") return '""';
  return [...value]
    .map((char) => {
      const lower = char.toLowerCase();
      const upper = char.toUpperCase();
      if (lower === upper || [...lower].length !== 1 || [...upper].length !== 1) return ebnfLiteral(char);
      return lower < "\x80" && upper < "\x80" ? `[${classChar(lower)}${classChar(upper)}]` : `(${ebnfLiteral(lower)} | ${ebnfLiteral(upper)})`;
    })
    .join(" ");
}

function classChar(char: string): string {
  if (char === "]" || char === "\\" || char === "^" || char === "-") return `\\${char}`;
  const code = char.codePointAt(0)!;
  if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).padStart(2, "0")}`;
  return char;
}

/** Lark names become EBNF rule names; `root` is taken by the generated start rule. */
class EbnfNames {
  private readonly map = new Map<string, string>();

  constructor(larkNames: string[]) {
    const taken = new Set(larkNames);
    for (const name of larkNames) {
      let ebnf = name;
      if (name === "root") {
        let suffix = 0;
        do ebnf = `lark_root${suffix++ || ""}`;
        while (taken.has(ebnf));
        taken.add(ebnf);
      }
      this.map.set(name, ebnf);
    }
  }

  of(name: string): string {
    return this.map.get(name)!;
  }
}

function describe(token: LarkToken): string {
  switch (token.kind) {
    case "name":
      return `'${token.name}'`;
    case "op":
      return `'${token.text}'`;
    case "newline":
      return "end of line";
    default:
      return token.kind;
  }
}

const INT = "[0-9]+";
const EXP = "[eE] [+\\-]? [0-9]+";
const DECIMAL = `([0-9]+ "." [0-9]* | "." [0-9]+)`;
const FLOAT = `(${INT} ${EXP} | ${DECIMAL} (${EXP})?)`;
const NUMBER = `(${FLOAT} | ${INT})`;

/** Lark's `common.lark` terminals, as EBNF with the same language. */
const COMMON_TERMINALS: Record<string, string> = {
  DIGIT: "[0-9]",
  HEXDIGIT: "[a-fA-F0-9]",
  INT,
  SIGNED_INT: `[+\\-]? ${INT}`,
  DECIMAL,
  FLOAT,
  SIGNED_FLOAT: `[+\\-]? ${FLOAT}`,
  NUMBER,
  SIGNED_NUMBER: `[+\\-]? ${NUMBER}`,
  LCASE_LETTER: "[a-z]",
  UCASE_LETTER: "[A-Z]",
  LETTER: "[a-zA-Z]",
  WORD: "[a-zA-Z]+",
  CNAME: "[_a-zA-Z] [_a-zA-Z0-9]*",
  WS_INLINE: "[ \\t]+",
  WS: "[ \\t\\x0c\\r\\n]+",
  CR: '"\\r"',
  LF: '"\\n"',
  NEWLINE: '("\\r"? "\\n")+',
  // A double-quoted string on one line whose quotes inside are backslash-escaped.
  ESCAPED_STRING: '"\\"" ([^"\\\\\\n] | "\\\\" [^\\n])* "\\""',
};
