import { randomBytes } from "node:crypto";
import { PyFloat, PyInt, pythonFloatRepr } from "../../python-format.js";

/**
 * JSON read and written without losing what Python tells apart (`1` from `1.0`, every digit of a
 * large integer): such numbers come back wrapped as `PyFloat` / `PyInt` (see python-format.ts).
 */

const MAX_DEPTH = 2000;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/** Parses JSON text like Python's `json.loads`: lossless numbers, and NaN/Infinity accepted. */
export function parseJsonLossless(text: string): unknown {
  const parser = new LosslessParser(text);
  parser.skipWhitespace();
  const value = parser.parseValue(0);
  parser.skipWhitespace();
  if (parser.pos < text.length) parser.fail("Extra data");
  return value;
}

class LosslessParser {
  pos = 0;

  constructor(private readonly text: string) {}

  fail(message: string): never {
    throw new SyntaxError(`${message} at position ${this.pos}`);
  }

  skipWhitespace(): void {
    const { text } = this;
    let pos = this.pos;
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  parseValue(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail("JSON nested too deeply");
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case 0x7b /* { */:
        return this.parseObject(depth);
      case 0x5b /* [ */:
        return this.parseArray(depth);
      case 0x22 /* " */:
        return this.parseString();
      case 0x74 /* t */:
        return this.literal("true", true);
      case 0x66 /* f */:
        return this.literal("false", false);
      case 0x6e /* n */:
        return this.literal("null", null);
      case 0x4e /* N */:
        return this.literal("NaN", new PyFloat(Number.NaN));
      case 0x49 /* I */:
        return this.literal("Infinity", new PyFloat(Number.POSITIVE_INFINITY));
      default:
        if (c === 0x2d /* - */ && this.text.startsWith("-Infinity", this.pos)) return this.literal("-Infinity", new PyFloat(Number.NEGATIVE_INFINITY));
        return this.parseNumber();
    }
  }

  private literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail("Expecting value");
    this.pos += word.length;
    return value;
  }

  private parseNumber(): unknown {
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (!match) this.fail("Expecting value");
    const lexeme = match[0];
    this.pos += lexeme.length;
    return numberFromLexeme(lexeme);
  }

  private parseString(): string {
    const { text } = this;
    const start = this.pos + 1;
    let pos = start;
    let escaped = false;
    for (;;) {
      if (pos >= text.length) this.fail("Unterminated string");
      const c = text.charCodeAt(pos);
      if (c === 0x22) break;
      if (c === 0x5c) {
        escaped = true;
        pos += 2;
        continue;
      }
      if (c < 0x20) {
        this.pos = pos;
        this.fail("Invalid control character in string");
      }
      pos++;
    }
    this.pos = pos + 1;
    if (!escaped) return text.slice(start, pos);
    // The native parser decodes (and validates) escape sequences fastest.
    return JSON.parse(text.slice(start - 1, pos + 1)) as string;
  }

  private parseArray(depth: number): unknown[] {
    this.pos++;
    const items: unknown[] = [];
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return items;
    }
    for (;;) {
      this.skipWhitespace();
      items.push(this.parseValue(depth + 1));
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x5d) return items;
      if (c !== 0x2c) {
        this.pos--;
        this.fail("Expecting ',' delimiter");
      }
    }
  }

  private parseObject(depth: number): Record<string, unknown> {
    this.pos++;
    const object: Record<string, unknown> = {};
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return object;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 0x22) this.fail("Expecting property name enclosed in double quotes");
      const key = this.parseString();
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos++) !== 0x3a) {
        this.pos--;
        this.fail("Expecting ':' delimiter");
      }
      this.skipWhitespace();
      setOwn(object, key, this.parseValue(depth + 1));
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x7d) return object;
      if (c !== 0x2c) {
        this.pos--;
        this.fail("Expecting ',' delimiter");
      }
    }
  }
}

/** Assigns like JSON.parse does: `__proto__` becomes an ordinary own property. */
export function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

function numberFromLexeme(lexeme: string): unknown {
  const isFloat = lexeme.includes(".") || lexeme.includes("e") || lexeme.includes("E");
  if (isFloat) {
    const value = Number(lexeme);
    return Number.isInteger(value) || !Number.isFinite(value) ? new PyFloat(value) : value;
  }
  // Up to 15 digits always fits a double exactly.
  if (lexeme.length <= 15) return lexeme === "-0" ? 0 : Number(lexeme);
  const big = BigInt(lexeme);
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : new PyInt(big);
}

/** Renders a PyFloat as a JSON number token; non-finite values have none, so they become null. */
export function pyFloatJsonToken(value: number): string {
  return Number.isFinite(value) ? pythonFloatRepr(value) : "null";
}

const placeholderToken = randomBytes(12).toString("hex");
const placeholderPrefix = `@pyjson-${placeholderToken}:`;
const placeholderPattern = new RegExp(`"@pyjson-${placeholderToken}:([^"@]*)@"`, "g");

/**
 * JSON text for HTTP responses and storage, keeping `1.0` a float and large integers exact. Uses the
 * native serializer; wrapped numbers pass through as unique placeholders swapped for their tokens.
 */
export function stringifyJsonLossless(value: unknown): string {
  let sawWrapped = false;
  const text = JSON.stringify(value, function (this: Record<string, unknown>, key: string, current: unknown) {
    const original = this[key];
    if (original instanceof PyFloat) {
      sawWrapped = true;
      return `${placeholderPrefix}${pyFloatJsonToken(original.value)}@`;
    }
    if (original instanceof PyInt) {
      sawWrapped = true;
      return `${placeholderPrefix}${original.value.toString()}@`;
    }
    return current;
  });
  if (text === undefined) return "null";
  return sawWrapped ? text.replace(placeholderPattern, "$1") : text;
}
