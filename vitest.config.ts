import { configDefaults, defineConfig } from "vitest/config";

/**
 * Tests that measure how the server answers while it works hard (`/health` latency under heavy
 * requests) run after all the others, one file at a time: on a two-core machine a neighbouring
 * test file would measure the machine, not the server.
 */
const UNDER_LOAD = "src/**/*-under-load.test.ts";

export default defineConfig({
  test: {
    globalSetup: ["src/testing/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: { name: "main", include: ["src/**/*.test.ts", "examples/**/*.test.ts"], exclude: [...configDefaults.exclude, UNDER_LOAD], sequence: { groupOrder: 0 } },
      },
      { extends: true, test: { name: "under-load", include: [UNDER_LOAD], fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
