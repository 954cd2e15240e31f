/**
 * Regexes rewritten so that xgrammar (the WASM build we use) enforces them exactly, or more
 * narrowly, but never more loosely:
 *
 * - Its character classes are only reliable for ASCII members: a non-ASCII range may match nothing,
 *   or every ASCII character instead (`[\u4e00-\u9fff]` takes "a"), and a negated class ignores
 *   its non-ASCII members. So every class, `.` and shorthand is rewritten as an ASCII class plus, for
 *   the non-ASCII part, either `[^\u0000-\u007f]` (all of it, which xgrammar does get right) or the
 *   characters one by one (up to 256 of them). A larger, partial non-ASCII set is left out: that
 *   position then matches its ASCII part only.
 * - In a JSON-schema `pattern` (`jsonStringRegex`), xgrammar puts the pattern between the quotes as
 *   is, so `.`, `[^@]` or a literal `"` would allow an unescaped quote, backslash or control
 *   character: invalid JSON. There, each such character is replaced by its JSON escapes, so the
 *   rewritten pattern matches the JSON spelling of exactly the values the original matches (with
 *   JavaScript's meaning of `.` and the shorthands, which is what a client's validator uses).
 *
 * Syntax the rewriter does not know (anchors, back-references, property classes…) passes through
 * for xgrammar to accept or refuse. Throws RangeError when a class is left with no character.
 */

type Ranges = [number, number][];
type Mode = "xgrammar" | "json";

const MAX = 0x10ffff;
const ASCII: Ranges = [[0, 0x7f]];
const SURROGATES: Ranges = [[0xd800, 0xdfff]];
const ALL_NON_ASCII = subtract([[0x80, MAX]], SURROGATES);
const MAX_LISTED = 256;
const LINE_TERMINATORS: Ranges = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];
const DIGITS: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const WHITESPACE: Record<Mode, Ranges> = {
  // xgrammar's \s, as its regex converter defines it.
  xgrammar: [
    [0x09, 0x0d],
    [0x20, 0x20],
    [0xa0, 0xa0],
  ],
  // JavaScript's \s.
  json: [
    [0x09, 0x0d],
    [0x20, 0x20],
    [0xa0, 0xa0],
    [0x1680, 0x1680],
    [0x2000, 0x200a],
    [0x2028, 0x2029],
    [0x202f, 0x202f],
    [0x205f, 0x205f],
    [0x3000, 0x3000],
    [0xfeff, 0xfeff],
  ],
};
const CONTROL_ESCAPES: Record<string, number> = { n: 0x0a, t: 0x09, r: 0x0d, f: 0x0c, v: 0x0b, "0": 0x00 };
/** Characters JSON requires escaped inside a string, and their short escapes. */
const MUST_ESCAPE: Ranges = [
  [0x00, 0x1f],
  [0x22, 0x22],
  [0x5c, 0x5c],
];
const SHORT_ESCAPES: Record<number, string> = { 0x08: "b", 0x0c: "f", 0x0a: "n", 0x0d: "r", 0x09: "t" };

/** A regex constraint (xgrammar's dialect, where `.` is any character), made safe for xgrammar's classes. */
export function xgrammarRegex(pattern: string): string {
  return rewrite(pattern, "xgrammar");
}

/** A JSON-schema `pattern`, rewritten to match the JSON string bodies whose values it matches. */
export function jsonStringRegex(pattern: string): string {
  return rewrite(pattern, "json");
}

function rewrite(pattern: string, mode: Mode): string {
  const chars = [...pattern];
  let out = "";
  let i = 0;
  while (i < chars.length) {
    const char = chars[i]!;
    const rest = () => chars.slice(i, i + 40).join("");
    if (char === "\\" && i + 1 < chars.length) {
      const { ranges, raw, next } = readEscape(chars, i + 1, false, mode);
      out += ranges ? renderSet(ranges, mode) : raw;
      i = next;
    } else if (char === "[") {
      const parsed = readClass(chars, i + 1, mode);
      if (!parsed) return out + chars.slice(i).join(""); // unterminated: let xgrammar report it
      out += renderSet(parsed.ranges, mode);
      i = parsed.next;
    } else if (char === ".") {
      out += renderSet(mode === "json" ? complement(LINE_TERMINATORS) : [[0, MAX]], mode);
      i++;
    } else if (char === "{" && /^\{\d+(,\d*)?\}/.test(rest())) {
      const quantifier = /^\{\d+(,\d*)?\}/.exec(rest())![0];
      out += quantifier;
      i += quantifier.length;
    } else if (char === "(" && chars[i + 1] === "?") {
      // A group's modifier, `(?:`, `(?=`, …: syntax, not characters.
      const modifier = /^\(\?(<?[=!]|:|<[A-Za-z_]\w*>)?/.exec(rest())![0];
      out += modifier;
      i += modifier.length;
    } else if ("()|*+?^$".includes(char)) {
      out += char;
      i++;
    } else {
      const code = char.codePointAt(0)!;
      out += renderSet([[code, code]], mode);
      i++;
    }
  }
  return out;
}

interface Escape {
  ranges?: Ranges;
  raw: string;
  next: number;
}

/** An escape starting at `chars[at]` (after the backslash): the characters it stands for, or raw text to keep. */
function readEscape(chars: string[], at: number, inClass: boolean, mode: Mode): Escape {
  const letter = chars[at]!;
  const shorthand: Record<string, Ranges> = { d: DIGITS, w: WORD, s: WHITESPACE[mode] };
  if (shorthand[letter]) return { ranges: shorthand[letter], raw: "", next: at + 1 };
  const upper = shorthand[letter.toLowerCase()];
  if (upper && letter !== letter.toLowerCase()) return { ranges: complement(upper), raw: "", next: at + 1 };
  if (CONTROL_ESCAPES[letter] !== undefined) return single(CONTROL_ESCAPES[letter], at + 1);
  if (inClass && letter === "b") return single(0x08, at + 1);
  const hex = (width: number) => chars.slice(at + 1, at + 1 + width).join("");
  if (letter === "x" && /^[0-9a-fA-F]{2}$/.test(hex(2))) return single(parseInt(hex(2), 16), at + 3);
  if (letter === "u" && /^[0-9a-fA-F]{4}$/.test(hex(4))) return single(parseInt(hex(4), 16), at + 5);
  if (letter === "u" && chars[at + 1] === "{") {
    const close = chars.indexOf("}", at + 2);
    const digits = close > 0 ? chars.slice(at + 2, close).join("") : "";
    if (/^[0-9a-fA-F]{1,6}$/.test(digits) && parseInt(digits, 16) <= MAX) return single(parseInt(digits, 16), close + 1);
  }
  // Anchors, back-references, property classes: not characters; xgrammar decides.
  if (/[A-Za-z0-9]/.test(letter)) return { raw: `\\${letter}`, next: at + 1 };
  return single(letter.codePointAt(0)!, at + 1); // an escaped punctuation character stands for itself
}

function single(code: number, next: number): Escape {
  return { ranges: [[code, code]], raw: "", next };
}

/** A class body starting after `[`; undefined when it is never closed. */
function readClass(chars: string[], start: number, mode: Mode): { ranges: Ranges; next: number } | undefined {
  let i = start;
  const negated = chars[i] === "^";
  if (negated) i++;
  const members: Ranges = [];
  const readMember = (): Ranges => {
    if (chars[i] === "\\" && i + 1 < chars.length) {
      const escaped = readEscape(chars, i + 1, true, mode);
      i = escaped.next;
      return escaped.ranges ?? [...escaped.raw].map((c) => [c.codePointAt(0)!, c.codePointAt(0)!] as [number, number]);
    }
    const code = chars[i++]!.codePointAt(0)!;
    return [[code, code]];
  };
  while (i < chars.length && chars[i] !== "]") {
    const first = readMember();
    const isSingle = first.length === 1 && first[0]![0] === first[0]![1];
    if (isSingle && chars[i] === "-" && i + 1 < chars.length && chars[i + 1] !== "]") {
      i++;
      members.push([first[0]![0], readMember()[0]![0]]);
    } else {
      members.push(...first);
    }
  }
  if (i >= chars.length) return undefined;
  const ranges = normalize(members);
  return { ranges: negated ? complement(ranges) : ranges, next: i + 1 };
}

/** A set of characters as one regex unit xgrammar gets right (see the file comment). */
function renderSet(ranges: Ranges, mode: Mode): string {
  const set = subtract(normalize(ranges), SURROGATES);
  const raw = mode === "json" ? subtract(set, MUST_ESCAPE) : set;
  const options: string[] = [];
  const ascii = intersect(raw, ASCII);
  const nonAscii = subtract(raw, ASCII);
  if (same(nonAscii, ALL_NON_ASCII)) {
    // A negated class of ASCII characters only: xgrammar matches it right, non-ASCII included.
    const missing = subtract(ASCII, ascii);
    if (missing.length > 0) options.push(`[^${classBody(missing)}]`);
    else options.push(renderClass(ASCII), "[^\\u0000-\\u007f]");
  } else {
    if (ascii.length > 0) options.push(renderClass(ascii));
    if (size(nonAscii) <= MAX_LISTED) for (const [low, high] of nonAscii) for (let code = low; code <= high; code++) options.push(String.fromCodePoint(code));
  }
  if (mode === "json") {
    const escaped = intersect(set, MUST_ESCAPE);
    if (escaped.length > 0) options.push(`\\\\${jsonEscapeTail(escaped)}`);
  }
  if (options.length === 0) {
    throw new RangeError("a character class is left with no character (a non-ASCII range can be used only when it has at most 256 characters or covers all of non-ASCII)");
  }
  return options.length === 1 ? options[0]! : `(?:${options.join("|")})`;
}

/** What may follow the backslash of a JSON escape of one of the given characters (quotes, backslashes, controls). */
function jsonEscapeTail(ranges: Ranges): string {
  const letters: string[] = [];
  const unicode: string[] = [];
  for (const [low, high] of ranges) {
    if (low === 0x00 && high === 0x1f) {
      letters.push(...Object.values(SHORT_ESCAPES));
      unicode.push("u00[01][0-9a-fA-F]");
      continue;
    }
    for (let code = low; code <= high; code++) {
      if (code === 0x22) letters.push("\\u0022");
      else if (code === 0x5c) letters.push("\\u005c");
      else {
        if (SHORT_ESCAPES[code]) letters.push(SHORT_ESCAPES[code]!);
        const hex = code.toString(16).padStart(2, "0");
        unicode.push(`u00${/[a-f]/.test(hex) ? `${hex[0]}[${hex[1]}${hex[1]!.toUpperCase()}]` : hex}`);
      }
    }
  }
  const options = [...(letters.length === 0 ? [] : [letters.length === 1 ? letters[0]! : `[${letters.join("")}]`]), ...unicode];
  return options.length === 1 ? options[0]! : `(?:${options.join("|")})`;
}

/** An ASCII-only class (the kind xgrammar matches correctly). */
function renderClass(ranges: Ranges): string {
  if (ranges.length === 1 && ranges[0]![0] === ranges[0]![1]) return classChar(ranges[0]![0]);
  return `[${classBody(ranges)}]`;
}

function classBody(ranges: Ranges): string {
  return ranges.map(([low, high]) => (low === high ? classChar(low) : `${classChar(low)}-${classChar(high)}`)).join("");
}

function classChar(code: number): string {
  const char = String.fromCharCode(code);
  return /[A-Za-z0-9]/.test(char) ? char : `\\u${code.toString(16).padStart(4, "0")}`;
}

function size(ranges: Ranges): number {
  return ranges.reduce((sum, [low, high]) => sum + high - low + 1, 0);
}

function same(a: Ranges, b: Ranges): boolean {
  return a.length === b.length && a.every(([low, high], index) => low === b[index]![0] && high === b[index]![1]);
}

function normalize(ranges: Ranges): Ranges {
  const sorted = ranges.map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as [number, number]).sort((x, y) => x[0] - y[0]);
  const merged: Ranges = [];
  for (const [low, high] of sorted) {
    const last = merged[merged.length - 1];
    if (last && low <= last[1] + 1) last[1] = Math.max(last[1], high);
    else merged.push([low, high]);
  }
  return merged;
}

function complement(ranges: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [low, high] of normalize(ranges)) {
    if (low > next) out.push([next, low - 1]);
    next = high + 1;
  }
  if (next <= MAX) out.push([next, MAX]);
  return out;
}

function intersect(a: Ranges, b: Ranges): Ranges {
  return subtract(a, complement(b));
}

function subtract(a: Ranges, b: Ranges): Ranges {
  const out: Ranges = [];
  for (const [low, high] of normalize(a)) {
    let start = low;
    for (const [cutLow, cutHigh] of normalize(b)) {
      if (cutHigh < start || cutLow > high) continue;
      if (cutLow > start) out.push([start, cutLow - 1]);
      start = Math.max(start, cutHigh + 1);
    }
    if (start <= high) out.push([start, high]);
  }
  return out;
}
