import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every reference in the code and the docs resolves inside the repository: a `docs/…md#anchor`
 * cited in a comment names a file under docs/ and an anchor in it, a Markdown link names a file
 * (and heading or `<a id>`) that exists, and nothing cites the specification files that live
 * outside the repository (`spec/*.md`, `§` sections, DESIGN.md) or the old single decision log.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const scannedRoots = ["src", "examples", "bench", "python", "scripts", "native", "bin", "docs", "README.md"];
const skippedDirectories = new Set(["node_modules", "dist", "build", ".cache", "testdata", "__pycache__", "data"]);
const textExtensions = /\.(ts|tsx|js|mjs|cjs|py|cc|h|sh|md)$/;
const thisFile = relative(root, fileURLToPath(import.meta.url));

/** Citations of documents that are not in the repository; built from parts so this file does not match itself. */
const outsideReferences: { pattern: RegExp; why: string }[] = [
  { pattern: new RegExp(["spec", "/(chat|trace|training|interface)\\.md"].join("")), why: "cites a specification file outside the repository; cite docs/api/ instead" },
  { pattern: /\u00a7/, why: "cites a section sign (§) of a specification outside the repository; cite a docs/api/ anchor instead" },
  { pattern: new RegExp(["DESIGN", "\\.md"].join("")), why: "cites DESIGN.md, which is not in the repository" },
  { pattern: new RegExp(["docs/decisions", "\\.md"].join("")), why: "cites the old decision log; cite docs/decisions/<area>.md#D-AREA-NNN" },
];

interface Problem {
  file: string;
  line: number;
  reference: string;
  why: string;
}

function listFiles(path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (statSync(full).isFile()) return textExtensions.test(path) ? [path] : [];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return skippedDirectories.has(entry.name) ? [] : listFiles(join(path, entry.name));
    return entry.isFile() && textExtensions.test(entry.name) ? [join(path, entry.name)] : [];
  });
}

/** GitHub's heading anchor: lower case, inline markup dropped, punctuation removed, spaces as hyphens. */
function headingSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "");
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors a Markdown file defines: its headings' slugs (numbered when repeated) and its `<a id>`/`<a name>` ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = headingSlug(heading[1]!);
      const count = seen.get(slug) ?? 0;
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
      seen.set(slug, count + 1);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  }
  return anchors;
}

/** Checks one file's text; `readDoc` gives a repository file's text, or undefined when it does not exist. */
function checkFile(file: string, text: string, readDoc: (path: string) => string | undefined): Problem[] {
  const problems: Problem[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (path: string, doc: string) => {
    if (!anchorCache.has(path)) anchorCache.set(path, anchorsOf(doc));
    return anchorCache.get(path)!;
  };
  const resolveTarget = (line: number, reference: string, target: string, anchor: string | undefined) => {
    if (target.startsWith("..") || target.startsWith("/")) {
      problems.push({ file, line, reference, why: "points outside the repository" });
      return;
    }
    const doc = readDoc(target);
    if (doc === undefined) {
      problems.push({ file, line, reference, why: `no file ${target}` });
      return;
    }
    if (anchor && target.endsWith(".md") && !anchors(target, doc).has(anchor)) {
      problems.push({ file, line, reference, why: `no anchor #${anchor} in ${target}` });
    }
  };
  const lines = text.split("\n");
  const isMarkdown = file.endsWith(".md");
  let inFence = false;
  lines.forEach((content, index) => {
    const line = index + 1;
    for (const { pattern, why } of outsideReferences) {
      const match = pattern.exec(content);
      if (match) problems.push({ file, line, reference: match[0], why });
    }
    if (!isMarkdown) {
      for (const match of content.matchAll(/\bdocs\/[\w./-]*[\w-]\.md(?:#([\w-]+))?/g)) {
        resolveTarget(line, match[0], match[0].split("#")[0]!, match[1]);
      }
      return;
    }
    if (/^\s*(```|~~~)/.test(content)) inFence = !inFence;
    if (inFence) return;
    for (const match of content.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
      const [path, anchor] = link.split("#") as [string, string | undefined];
      const target = path === "" ? file : relative(root, resolve(root, dirname(file), path));
      resolveTarget(line, link, target, anchor);
    }
  });
  return problems;
}

function readRepositoryFile(path: string): string | undefined {
  const full = join(root, path);
  if (!existsSync(full)) return undefined;
  return statSync(full).isDirectory() ? "" : readFileSync(full, "utf8");
}

describe("references in the code and the docs", () => {
  it("all resolve inside the repository", () => {
    const files = scannedRoots.flatMap(listFiles).filter((file) => file !== thisFile);
    expect(files.length).toBeGreaterThan(300);
    const problems = files.flatMap((file) => checkFile(file, readFileSync(join(root, file), "utf8"), readRepositoryFile));
    expect(problems.map((p) => `${p.file}:${p.line}: ${p.reference}: ${p.why}`)).toEqual([]);
  });

  it("are cited in the code often enough to be worth checking", () => {
    const cited = scannedRoots
      .flatMap(listFiles)
      .filter((file) => !file.endsWith(".md") && file !== thisFile)
      .flatMap((file) => [...readFileSync(join(root, file), "utf8").matchAll(/\bdocs\/(api|decisions)\/[\w-]+\.md#[\w-]+/g)]);
    expect(cited.length).toBeGreaterThan(150);
  });

  it("are reported when a file, an anchor or the repository's edge is missed", () => {
    const docs: Record<string, string> = {
      "docs/api/chat.md": '# Chat\n\n<a id="logprobs"></a>\n## Logprobs\n\n## Logprobs\n',
      "docs/api/README.md": "[chat](chat.md#logprobs-1) [gone](gone.md) [bad](chat.md#nope) [up](../../../x.md)\n",
    };
    const read = (path: string) => docs[path];
    const code = ["/** Raw logprobs (docs/api/chat.md#logprobs), sorted (docs/api/chat.md#top-logprobs). */", "// See docs/api/trace.md#calls and spec/chat.md \u00a73.", "# D-1: docs/decisions" + ".md"].join("\n");
    const codeProblems = checkFile("src/x.ts", code, read).map((p) => `${p.line} ${p.reference} ${p.why}`);
    expect(codeProblems).toEqual([
      "1 docs/api/chat.md#top-logprobs no anchor #top-logprobs in docs/api/chat.md",
      `2 ${"spec"}/chat.md cites a specification file outside the repository; cite docs/api/ instead`,
      "2 \u00a7 cites a section sign (\u00a7) of a specification outside the repository; cite a docs/api/ anchor instead",
      "2 docs/api/trace.md#calls no file docs/api/trace.md",
      `3 ${"docs/decisions"}.md cites the old decision log; cite docs/decisions/<area>.md#D-AREA-NNN`,
      `3 ${"docs/decisions"}.md no file ${"docs/decisions"}.md`,
    ]);
    const docProblems = checkFile("docs/api/README.md", docs["docs/api/README.md"]!, read).map((p) => `${p.reference} ${p.why}`);
    expect(docProblems).toEqual(["gone.md no file docs/api/gone.md", "chat.md#nope no anchor #nope in docs/api/chat.md", "../../../x.md points outside the repository"]);
  });

  it("name each decision once, with its anchor right above its heading, in the file of its area", () => {
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const file of listFiles("docs/decisions").filter((f) => !f.endsWith("README.md"))) {
      const lines = readFileSync(join(root, file), "utf8").split("\n");
      const prefixes = new Set<string>();
      lines.forEach((line, index) => {
        const heading = /^### (D-([A-Z]+)-\d{3})\b/.exec(line);
        if (!heading) return;
        const [, id, area] = heading as unknown as [string, string, string];
        prefixes.add(area);
        if (seen.has(id)) problems.push(`${file}:${index + 1}: ${id} is used twice`);
        seen.add(id);
        if (lines[index - 1] !== `<a id="${id}"></a>`) problems.push(`${file}:${index + 1}: ${id} lacks its anchor line`);
      });
      if (prefixes.size !== 1) problems.push(`${file}: decisions of ${prefixes.size} areas (${[...prefixes].join(", ")})`);
    }
    expect(seen.size).toBeGreaterThan(250);
    expect(problems).toEqual([]);
  });

  it("take GitHub's heading anchors as well as explicit ids", () => {
    const anchors = anchorsOf('# Chat preparation (`bench/chat-prepare.ts`)\n\n```\n# not a heading\n```\n<a id="D-TRAIN-001"></a>\n### D-TRAIN-001 Model registry\n');
    expect([...anchors]).toEqual(["chat-preparation-benchchat-preparets", "D-TRAIN-001", "d-train-001-model-registry"]);
  });
});
