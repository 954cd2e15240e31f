import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { authenticateApiKey, listApiKeys } from "../store/keys.js";
import { runCli, startServer } from "../testing/cli.js";
import { makeTempDir, openTestStore, type TestStore, testDialects } from "../testing/stores.js";

describe.each(testDialects)("flywheel keys on %s", (dialect) => {
  let store: TestStore | undefined;
  afterEach(async () => {
    await store?.close();
  });

  it("creates a key as the last stdout line, lists and revokes it", async () => {
    store = await openTestStore(dialect);
    const env = { DATABASE_URL: store.databaseUrl };
    const dataDir = ["--data-dir", store.dataDir];
    const created = await runCli(["keys", "create", "--entity", "team-x", "--name", "laptop", ...dataDir], env);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim().split("\n").at(-1)!;
    expect(key).toMatch(/^fw_/);
    expect(await authenticateApiKey(store.db, key)).toMatchObject({ entity: "team-x" });

    const listed = await runCli(["keys", "list", ...dataDir], env);
    expect(listed.stdout).toContain("team-x");
    expect(listed.stdout).toContain("active");
    expect(listed.stdout).not.toContain(key);

    const [row] = await listApiKeys(store.db, "team-x");
    const revoked = await runCli(["keys", "revoke", row!.id, ...dataDir], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(await authenticateApiKey(store.db, key)).toBeUndefined();
  });

  it("creates a worker key with --role worker", async () => {
    store = await openTestStore(dialect);
    const created = await runCli(["keys", "create", "--role", "worker", "--data-dir", store.dataDir], { DATABASE_URL: store.databaseUrl });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/worker key/);
    expect(await authenticateApiKey(store.db, created.stdout.trim().split("\n").at(-1)!)).toMatchObject({ role: "worker" });
    const wrong = await runCli(["keys", "create", "--role", "admin", "--data-dir", store.dataDir], { DATABASE_URL: store.databaseUrl });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--role must be user or worker/);
  });

  it("exits 2 with a message on a bad command line", async () => {
    store = await openTestStore(dialect);
    const res = await runCli(["keys", "create", "--data-dir", store.dataDir], { DATABASE_URL: store.databaseUrl });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--entity/);
  });
});

describe("flywheel serve", () => {
  it("prints a key for entity default on the first start only, and stops cleanly on SIGTERM", async () => {
    const dataDir = makeTempDir();
    try {
      const first = await startServer(["--data-dir", dataDir]);
      const key = /^\s+(fw_\S+)$/m.exec(first.stdout())?.[1];
      expect(key).toBeDefined();
      const res = await fetch(`${first.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      first.child.kill("SIGTERM");
      expect(await first.exited).toBe(0);
      expect(first.stdout()).toContain('"msg":"stopped"');
      // One JSON line per request, without the key.
      const requestLines = first
        .stdout()
        .split("\n")
        .filter((line) => line.includes('"msg":"request"'));
      expect(requestLines).toHaveLength(1);
      expect(JSON.parse(requestLines[0]!)).toMatchObject({ method: "GET", route: "/v1/models", status: 200, reqId: expect.any(String), latencyMs: expect.any(Number) });
      expect(
        first
          .stdout()
          .split("\n")
          .filter((line) => line.includes(key!)),
      ).toHaveLength(1);

      const second = await startServer(["--data-dir", dataDir]);
      expect(second.stdout()).not.toMatch(/fw_/);
      second.child.kill("SIGINT");
      expect(await second.exited).toBe(0);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("ensures FLYWHEEL_API_KEY exists for entity default", async () => {
    const dataDir = makeTempDir();
    try {
      const key = "ci-key-0123456789abcdef";
      const server = await startServer(["--data-dir", dataDir], { FLYWHEEL_API_KEY: key });
      expect(server.stdout()).not.toContain(key);
      const res = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      server.child.kill("SIGTERM");
      expect(await server.exited).toBe(0);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses an invalid configuration with exit code 2", async () => {
    const res = await runCli(["serve", "--port", "not-a-port"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--port/);
  });
});

describe("flywheel --help", () => {
  it("answers --help and -h after any command and subcommand with that command's usage", async () => {
    for (const args of [
      ["models", "make-tiny", "--help"],
      ["keys", "create", "-h"],
      ["checkpoints", "download", "--help"],
    ]) {
      const res = await runCli(args, {});
      expect(res.code, `${args.join(" ")}: ${res.stderr}`).toBe(0);
      expect(res.stdout).toContain(`flywheel ${args[0]} ${args[1]}`);
    }
  }, 180_000);
});
