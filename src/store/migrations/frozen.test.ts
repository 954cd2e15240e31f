import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const folder = fileURLToPath(new URL(".", import.meta.url));
/** The only package a migration may use: the query builder it is written against. */
const ALLOWED_PACKAGES = new Set(["kysely"]);

/** Every module specifier a file imports or re-exports (static and dynamic). */
function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.map((imported) => imported.fileName);
}

/** A relative specifier that stays in this folder (`./x.js`, not `../x.js` or `./a/../../x.js`). */
function staysInFolder(specifier: string): boolean {
  return specifier.startsWith("./") && !specifier.split("/").includes("..");
}

describe("migrations", () => {
  const files = readdirSync(folder).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));

  it("are found", () => {
    expect(files).toContain("001-foundation.ts");
    expect(files).toContain("index.ts");
  });

  // A migration runs once per database, possibly long after it shipped: it must run as it did then,
  // so it may not import application code that later changes (nor close an import cycle through it).
  it.each(files)("%s imports nothing outside the migrations folder but kysely", (name) => {
    const outside = importsOf(join(folder, name)).filter((specifier) => !ALLOWED_PACKAGES.has(specifier) && !staysInFolder(specifier));
    expect(outside).toEqual([]);
  });

  it("the check sees an import of application code", () => {
    const source = 'import { leafKeys } from "../trace/calls/leaf-keys.js";\nimport { sql } from "kysely";\nconst x = await import("../db.js");';
    const specifiers = ts.preProcessFile(source, true, true).importedFiles.map((imported) => imported.fileName);
    expect(specifiers.filter((specifier) => !ALLOWED_PACKAGES.has(specifier) && !staysInFolder(specifier))).toEqual(["../trace/calls/leaf-keys.js", "../db.js"]);
  });
});
