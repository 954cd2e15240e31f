import { pythonRepr, pythonStr } from "../../../python-format.js";
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
