import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { openStore } from "../store/db.js";
import { startServer } from "../testing/cli.js";
import { createTestDatabase, dropTestDatabase, makeTempDir, testDialects } from "../testing/stores.js";
import { writeBaseModelDir } from "../testing/app.js";
import path from "node:path";
import fs from "node:fs";

/**
 * SIGKILL during a burst of writes: every write the server acknowledged must be in the database when
 * it reopens, and the database must be intact.
 */
describe.each(testDialects)("crash durability on %s", (dialect) => {
  it("keeps every acknowledged write after a SIGKILL mid-burst", async () => {
    const dataDir = makeTempDir();
    const databaseUrl = dialect === "postgres" ? await createTestDatabase() : undefined;
    writeBaseModelDir(path.join(dataDir, "models"), "test/base");
    const key = "crash-test-key-0123456789";
    const server = await startServer(["--data-dir", dataDir], { FLYWHEEL_API_KEY: key, DATABASE_URL: databaseUrl, FLYWHEEL_LOG_LEVEL: "warn" });
    try {
      const acknowledged: string[] = [];
      let next = 0;
      let stop = false;
      const writer = async () => {
        while (!stop) {
          const name = `m-${next++}`;
          try {
            const res = await fetch(`${server.url}/v1/preview/models`, {
              method: "POST",
              headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
              body: JSON.stringify({ project: "crash", name, base_model: "test/base" }),
            });
            if (res.status === 200) acknowledged.push(name);
          } catch {
            return; // the server is gone
          }
        }
      };
      const writers = Array.from({ length: 8 }, writer);
      while (acknowledged.length < 150) await new Promise((resolve) => setTimeout(resolve, 5));
      server.child.kill("SIGKILL");
      await server.exited;
      stop = true;
      await Promise.all(writers);

      const store = await openStore({ databaseUrl, dataDir });
      try {
        const rows = await store.db.selectFrom("models").select("name").where("project", "=", "crash").execute();
        const stored = new Set(rows.map((row) => row.name));
        expect(acknowledged.filter((name) => !stored.has(name))).toEqual([]);
        if (dialect === "sqlite") {
          const check = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(store.db);
          expect(check.rows[0]?.integrity_check).toBe("ok");
        }
      } finally {
        await store.close();
      }
    } finally {
      server.child.kill("SIGKILL");
      if (databaseUrl) await dropTestDatabase(databaseUrl);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
