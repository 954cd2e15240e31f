import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "./config.js";

/**
 * The modules that may read the environment: the service's configuration, and the engine's own
 * per-process kernel settings (the engine does not import `src/config.ts`). Tests, test helpers
 * (`src/testing/`), benchmarks, scripts and examples read it directly.
 */
const ENVIRONMENT_READERS = new Set(["src/config.ts", "src/engine/kernels/settings.ts"]);
/** `process.env`, `process["env"]`, or `env` taken from the `process` module. */
const READS_ENVIRONMENT = /\bprocess\s*(?:\.\s*env\b|\[\s*["'`]env["'`]\s*\])|\{[^}]*\benv\b[^}]*\}\s*from\s*["'](?:node:)?process["']/;
/** The names of the project's own variables. */
const VARIABLE = /\b(?:FLYWHEEL_[A-Z0-9]+(?:_[A-Z0-9]+)*|DATABASE_URL|TEST_DATABASE_URL)\b/g;

/** The repository's tracked files (what CI checks out), relative to its root. */
function trackedFiles(): string[] {
  return execFileSync("git", ["ls-files", "-z"], { cwd: projectRoot, encoding: "utf8" }).split("\0").filter(Boolean);
}

const isApplicationSource = (file: string) => file.startsWith("src/") && /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file) && !file.startsWith("src/testing/");

describe("configuration sources", () => {
  const files = trackedFiles();
  const read = (file: string) => fs.readFileSync(path.join(projectRoot, file), "utf8");

  it(`only ${[...ENVIRONMENT_READERS].join(" and ")} read the environment in the application`, () => {
    const sources = files.filter(isApplicationSource);
    expect(sources.length).toBeGreaterThan(100);
    for (const reader of ENVIRONMENT_READERS) expect(READS_ENVIRONMENT.test(read(reader)), reader).toBe(true);
    expect(sources.filter((file) => !ENVIRONMENT_READERS.has(file) && READS_ENVIRONMENT.test(read(file)))).toEqual([]);
  });

  it("the check sees the ways a module reads the environment", () => {
    for (const text of ["const a = process.env.SOME_SETTING;", 'const a = process["env"].X;', "const { SOME_SETTING } = process.env;", 'import { env } from "node:process";']) {
      expect(READS_ENVIRONMENT.test(text), text).toBe(true);
    }
    expect(READS_ENVIRONMENT.test("const env = loadClientEnvironment(); env.apiKey;")).toBe(false);
  });

  it("docs/configuration.md lists every variable the project reads", () => {
    const documented = read("docs/configuration.md");
    const readers = files.filter((file) => /^(src|bench|scripts|examples|python|native)\//.test(file) && /\.(tsx?|mjs|js|py)$/.test(file)).concat(".ci/run");
    const variables = new Set(readers.flatMap((file) => read(file).match(VARIABLE) ?? []));
    expect(variables.size).toBeGreaterThan(30);
    expect([...variables].filter((name) => !new RegExp(`\\b${name}\\b`).test(documented)).sort()).toEqual([]);
  });
});
