import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { writeBaseModelDir } from "../testing/app.js";
import { runCli, startServer } from "../testing/cli.js";
import { createTestDatabase, dropTestDatabase, makeTempDir, testDialects } from "../testing/stores.js";

const key = "artifact-cli-key-0123456789";

describe.each(testDialects)("flywheel artifacts upload on %s", (dialect) => {
  it("uploads files, prints the URL last, and an SFT job accepts that URL", async () => {
    const dataDir = makeTempDir();
    const databaseUrl = dialect === "postgres" ? await createTestDatabase() : undefined;
    writeBaseModelDir(path.join(dataDir, "models"), "test/base");
    const server = await startServer(["--data-dir", dataDir], { FLYWHEEL_API_KEY: key, DATABASE_URL: databaseUrl, FLYWHEEL_LOG_LEVEL: "warn" });
    try {
      const train = path.join(dataDir, "train.jsonl");
      fs.writeFileSync(
        train,
        `${JSON.stringify({
          messages: [
            { role: "user", content: "Q" },
            { role: "assistant", content: "A" },
          ],
        })}\n`,
      );
      const metadata = path.join(dataDir, "metadata.json");
      fs.writeFileSync(metadata, "{}");
      const args = ["artifacts", "upload", "--project", "proj", "--name", "sft-data", "--base-url", server.url, train, metadata];
      const first = await runCli(args, { FLYWHEEL_API_KEY: key });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout.trim().split("\n").at(-1)).toBe("wandb-artifact:///default/proj/sft-data:v0");
      expect(first.stdout).toMatch(/train.jsonl\t\d+ bytes/);
      const second = await runCli([...args.slice(0, -1), "--api-key", key], {});
      expect(second.stdout.trim().split("\n").at(-1)).toBe("wandb-artifact:///default/proj/sft-data:v1");

      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const model = (await (await fetch(`${server.url}/v1/preview/models`, { method: "POST", headers, body: JSON.stringify({ project: "proj", name: "m", base_model: "test/base" }) })).json()) as { id: string };
      const job = await fetch(`${server.url}/v1/preview/sft-training-jobs`, { method: "POST", headers, body: JSON.stringify({ model_id: model.id, training_data_url: "wandb-artifact:///default/proj/sft-data:v0" }) });
      expect(job.status).toBe(200);

      const badKey = await runCli([...args, "--api-key", "wrong-key"], {});
      expect(badKey.code).toBe(1);
      expect(badKey.stderr).toMatch(/HTTP 401/);
    } finally {
      server.child.kill("SIGKILL");
      await server.exited;
      if (databaseUrl) await dropTestDatabase(databaseUrl);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("flywheel artifacts upload command line", () => {
  it("exits 2 without a key or a readable file", async () => {
    const noKey = await runCli(["artifacts", "upload", "--project", "p", "--name", "n", "x.jsonl"], { WANDB_API_KEY: undefined });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/no API key/);
    const missing = await runCli(["artifacts", "upload", "--project", "p", "--name", "n", "--api-key", key, "/nonexistent/train.jsonl"], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read/);
  });
});
