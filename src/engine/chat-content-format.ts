import { parse, tokenize } from "@huggingface/jinja";

/**
 * How a chat template expects `message.content` (spec/chat.md §11.3): "openai" templates loop
 * over it as a list of `{type, text}` parts; "string" templates print it, so text parts are joined
 * with "\n" first. Detected as vLLM does, from the template's syntax tree: a `for` loop over the
 * `content` of a message taken from `messages` (directly, sliced, filtered or through a `set`
 * alias) makes it "openai". A template that does not parse counts as "string".
 */
export type ContentFormat = "string" | "openai";

interface Node {
  type: string;
  [key: string]: unknown;
}

const cache = new Map<string, ContentFormat>();

export function detectContentFormat(template: string): ContentFormat {
  const hit = cache.get(template);
  if (hit) return hit;
  let format: ContentFormat = "string";
  try {
    const program = parse(tokenize(template, { lstrip_blocks: true, trim_blocks: true })) as unknown as Node;
    format = loopsOverContent(program) ? "openai" : "string";
  } catch {
    format = "string";
  }
  if (cache.size > 64) cache.clear();
  cache.set(template, format);
  return format;
}

function loopsOverContent(program: Node): boolean {
  const nodes = [...walk(program)];
  const messageLists = aliases(nodes, new Set(["messages"]), (value, names) => accesses(value, names));
  const messages = new Set<string>();
  for (const node of nodes) {
    if (node.type === "For" && accesses(node.iterable as Node, messageLists)) {
      const loopvar = node.loopvar as Node;
      if (loopvar.type === "Identifier") messages.add(loopvar.value as string);
    }
  }
  const contents = aliases(nodes, new Set(), (value) => contentOf(value, messages));
  return nodes.some((node) => node.type === "For" && (contentOf(node.iterable as Node, messages) || accesses(node.iterable as Node, contents)));
}

/** `names` plus every variable `{% set %}` to a value that `derives` from them. */
function aliases(nodes: Node[], names: Set<string>, derives: (value: Node, names: Set<string>) => boolean): Set<string> {
  const found = new Set(names);
  for (const node of nodes) {
    if (node.type !== "Set" || !node.value) continue;
    const assignee = node.assignee as Node;
    if (assignee.type === "Identifier" && derives(node.value as Node, found)) found.add(assignee.value as string);
  }
  return found;
}

/** The variable itself, a slice of it, or it through filters (`messages[1:]`, `x | list`). */
function accesses(node: Node | undefined, names: Set<string>): boolean {
  if (!node) return false;
  if (node.type === "Identifier") return names.has(node.value as string);
  if (node.type === "FilterExpression") return accesses(node.operand as Node, names);
  if (node.type === "MemberExpression" && (node.property as Node).type === "SliceExpression") return accesses(node.object as Node, names);
  return false;
}

/** `m.content` or `m['content']` for a message variable m, possibly filtered. */
function contentOf(node: Node | undefined, messages: Set<string>): boolean {
  if (!node) return false;
  if (node.type === "FilterExpression") return contentOf(node.operand as Node, messages);
  if (node.type !== "MemberExpression") return false;
  const property = node.property as Node;
  const isContent = (property.type === "Identifier" && !node.computed && property.value === "content") || (property.type === "StringLiteral" && property.value === "content");
  return isContent && accesses(node.object as Node, messages);
}

function* walk(node: unknown): Generator<Node> {
  if (Array.isArray(node)) {
    for (const item of node) yield* walk(item);
    return;
  }
  if (!node || typeof node !== "object" || typeof (node as Node).type !== "string") return;
  yield node as Node;
  for (const value of Object.values(node)) if (value && typeof value === "object") yield* walk(value);
}
