import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Imports point downward only (README.md#layers). The layers, highest first, each a list of the
 * folders of `src/` on that level; `(root)` is the modules at `src/`'s root (configuration,
 * version, Python-style formatting), which every layer may read. A module may import its own
 * folder and any lower level; never a higher level, nor a peer on its own level.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["ui"],
  ["cli"],
  ["server"],
  // The job runner and the trace domain both serve the server and know nothing of each other.
  ["worker", "trace"],
  ["engine"],
  ["store"],
  ["(root)"],
];

/** Test support (`src/testing/`) builds whole apps from every layer; tests use it, production code never. */
const TEST_SUPPORT = "testing";
const ROOT = "(root)";

const src = dirname(fileURLToPath(import.meta.url));
const sourceFile = /\.(ts|tsx|mts|mjs|js)$/;
const isTest = (path: string) => /\.test\.tsx?$/.test(path) || relative(src, path).split(sep)[0] === TEST_SUPPORT;

function layerOf(path: string): string {
  const parts = relative(src, path).split(sep);
  return parts.length === 1 ? ROOT : parts[0]!;
}

const levelOf = (layer: string) => LAYERS.findIndex((level) => level.includes(layer));

/** Why importing `specifier` from `file` breaks the layering, or null when it does not. */
function layerViolation(file: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  const from = layerOf(file);
  const to = layerOf(resolve(dirname(file), specifier));
  if (to === TEST_SUPPORT) return isTest(file) ? null : "production code imports test support";
  if (isTest(file) || from === to) return null;
  const [fromLevel, toLevel] = [levelOf(from), levelOf(to)];
  if (fromLevel < 0) return `src/${from} is in no layer (add it to LAYERS)`;
  if (toLevel < 0) return `src/${to} is in no layer (add it to LAYERS)`;
  if (toLevel < fromLevel) return `${from} imports ${to}, a higher layer`;
  if (toLevel === fromLevel) return `${from} imports ${to}, a peer on its own level`;
  return null;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path);
    return entry.isFile() && sourceFile.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Every module a file names: static imports, `export … from`, `import type`, dynamic `import()` and `require()`. */
function importsOf(path: string): string[] {
  const info = ts.preProcessFile(readFileSync(path, "utf8"), true, true);
  return info.importedFiles.map((file) => file.fileName);
}

/**
 * Inside server/, each API surface is a folder (`chat/`, `training/`, `trace/`, …) that imports the
 * server's root modules (routes, errors, auth, model names) and lower layers, never another
 * surface: what two surfaces share moves to the root (`upstream-errors.ts`), and what one calls of
 * another is passed in by `app.ts` (`model-caller.ts`). The imports below are the known
 * exceptions; the list only shrinks (it is empty).
 */
const SURFACE_EXCEPTIONS = new Set<string>([]);

/** `server/<surface>` of a production module inside a server surface folder, else null. */
function surfaceOf(path: string): string | null {
  const parts = relative(src, path).split(sep);
  return parts[0] === "server" && parts.length > 2 ? `server/${parts[1]}` : null;
}

function surfaceViolation(file: string, specifier: string): string | null {
  if (!specifier.startsWith(".") || isTest(file)) return null;
  const [from, to] = [surfaceOf(file), surfaceOf(resolve(dirname(file), specifier))];
  if (!from || !to || from === to) return null;
  return `${relative(src, file).split(sep).join("/")} imports ${to}`;
}

describe("the layers", () => {
  it("are kept by every import in src/", () => {
    const files = sourceFiles(src);
    expect(files.length).toBeGreaterThan(300);
    const problems = files.flatMap((file) =>
      importsOf(file).flatMap((specifier) => {
        const why = layerViolation(file, specifier);
        return why ? [`${relative(src, file)} imports ${specifier}: ${why}`] : [];
      }),
    );
    expect(problems).toEqual([]);
  });

  it("keep each API surface inside server/ from importing another", () => {
    const found = new Set(sourceFiles(join(src, "server")).flatMap((file) => importsOf(file).flatMap((specifier) => surfaceViolation(file, specifier) ?? [])));
    expect([...found].sort()).toEqual([...SURFACE_EXCEPTIONS].sort());
  });

  it("tell a downward import from an upward or sideways one", () => {
    const at = (path: string) => join(src, path);
    expect(layerViolation(at("server/app.ts"), "../store/db.js")).toBeNull();
    expect(layerViolation(at("store/trace/object-class.ts"), "../../python-format.js")).toBeNull();
    expect(layerViolation(at("store/db.ts"), "../server/app.js")).toBe("store imports server, a higher layer");
    expect(layerViolation(at("engine/api.ts"), "../worker/worker.js")).toBe("engine imports worker, a higher layer");
    expect(layerViolation(at("config.ts"), "./store/db.js")).toBe("(root) imports store, a higher layer");
    expect(layerViolation(at("worker/worker.ts"), "../trace/tables.js")).toBe("worker imports trace, a peer on its own level");
    expect(layerViolation(at("server/app.ts"), "../testing/app.js")).toBe("production code imports test support");
    expect(layerViolation(at("server/app.test.ts"), "../testing/app.js")).toBeNull();
    expect(layerViolation(at("gadgets/x.ts"), "../store/db.js")).toBe("src/gadgets is in no layer (add it to LAYERS)");
  });

  it("find dynamic imports and re-exports too", () => {
    const text = 'export { a } from "./a.js";\nimport type { B } from "./b.js";\nconst c = await import("./c.js");\n';
    expect(ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName)).toEqual(["./a.js", "./b.js", "./c.js"]);
  });
});
