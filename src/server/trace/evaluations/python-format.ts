import { PyFloat, PyInt, pythonFloatRepr } from "../../../store/trace/json/lossless.js";
import { isJsonObject } from "../../../store/trace/object-class.js";

/**
 * Python's `str.format(**values)` as Weave's prompt templates use it (`messages_template`,
 * `scoring_prompt`): `{name}`, `{name[key]}`, `{name.key}`, `{{`/`}}` escapes, `!s`/`!r`
 * conversions and the `.Nf` format spec; values print as Python's `str()` would print the JSON
 * they hold. A missing name or an unsupported spec is an error with a readable message.
 */
export class TemplateError extends Error {}

export function formatPython(template: string, values: Record<string, unknown>): string {
  let out = "";
  let i = 0;
  while (i < template.length) {
    const c = template[i]!;
    if (c === "{" && template[i + 1] === "{") {
      out += "{";
      i += 2;
    } else if (c === "}" && template[i + 1] === "}") {
      out += "}";
      i += 2;
    } else if (c === "}") {
      throw new TemplateError("Single '}' encountered in format string");
    } else if (c === "{") {
      const end = template.indexOf("}", i);
      if (end < 0) throw new TemplateError("Single '{' encountered in format string");
      out += replacement(template.slice(i + 1, end), values);
      i = end + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

function replacement(field: string, values: Record<string, unknown>): string {
  const specAt = field.indexOf(":");
  const spec = specAt >= 0 ? field.slice(specAt + 1) : "";
  let name = specAt >= 0 ? field.slice(0, specAt) : field;
  let conversion = "s";
  const bang = name.indexOf("!");
  if (bang >= 0) {
    conversion = name.slice(bang + 1);
    name = name.slice(0, bang);
  }
  const [head, ...path] = name.split(/(?=[.[])/);
  if (!head) throw new TemplateError("Format strings with positional fields ({}) are not supported; name the variable");
  if (!Object.hasOwn(values, head)) {
    throw new TemplateError(`Prompt template variable '${head}' not found. Available variables: ${Object.keys(values).sort().join(", ")}`);
  }
  let value = values[head];
  for (const step of path) {
    const key = step.startsWith("[") ? step.slice(1, -1) : step.slice(1);
    if (Array.isArray(value) && /^[0-9]+$/.test(key) && Number(key) < value.length) value = value[Number(key)];
    else if (isJsonObject(value) && Object.hasOwn(value, key)) value = value[key];
    else throw new TemplateError(`Prompt template variable '${name}' not found: '${head}' has no '${key}'`);
  }
  if (conversion !== "s" && conversion !== "r") throw new TemplateError(`Unknown conversion '!${conversion}' in '{${field}}'`);
  return applySpec(spec, conversion === "r" ? pythonRepr(value) : pythonStr(value), field);
}

function applySpec(spec: string, text: string, field: string): string {
  if (spec === "") return text;
  throw new TemplateError(`Format spec ':${spec}' in '{${field}}' is not supported: write the value as it is`);
}

/** Python's `str()` of a JSON value. */
export function pythonStr(value: unknown): string {
  return typeof value === "string" ? value : pythonRepr(value);
}

/** Python's `repr()` of a JSON value (what `str()` prints for lists and dicts). */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (value instanceof PyFloat) return Number.isFinite(value.value) ? pythonFloatRepr(value.value) : Number.isNaN(value.value) ? "nan" : value.value > 0 ? "inf" : "-inf";
  if (value instanceof PyInt) return value.value.toString();
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : pythonFloatRepr(value);
  if (typeof value === "string") return stringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(", ")}]`;
  if (isJsonObject(value)) return `{${Object.entries(value).map(([key, item]) => `${stringRepr(key)}: ${pythonRepr(item)}`).join(", ")}}`;
  return String(value);
}

function stringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return out + quote;
}
