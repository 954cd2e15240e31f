import fs from "node:fs";
import path from "node:path";
import { parseCommandArgs, UsageError } from "./args.js";

export const artifactsUsage = `flywheel artifacts upload --project P --name N [--type T] [--metadata JSON] FILE...
  uploads the files as the next version of artifact P/N (for SFT: train.jsonl and optionally
  metadata.json) and prints its training_data_url as the last line. The server is --base-url or
  FLYWHEEL_BASE_URL (http://127.0.0.1:8000); the key is --api-key, FLYWHEEL_API_KEY or WANDB_API_KEY.`;

export async function artifactsCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action !== "upload") throw new UsageError(artifactsUsage);
  const { values, positionals } = parseCommandArgs(
    rest,
    {
      project: { type: "string" },
      name: { type: "string" },
      type: { type: "string" },
      metadata: { type: "string" },
      "base-url": { type: "string" },
      "api-key": { type: "string" },
    },
    true,
  );
  if (!values.project || !values.name) throw new UsageError("artifacts upload needs --project P and --name N");
  if (positionals.length === 0) throw new UsageError("artifacts upload needs at least one FILE");
  const apiKey = values["api-key"] ?? process.env.FLYWHEEL_API_KEY ?? process.env.WANDB_API_KEY;
  if (!apiKey) throw new UsageError("no API key: pass --api-key or set FLYWHEEL_API_KEY");
  const baseUrl = (values["base-url"] ?? process.env.FLYWHEEL_BASE_URL ?? "http://127.0.0.1:8000").replace(/\/+$/, "");
  let metadata: unknown = {};
  if (values.metadata !== undefined) {
    try {
      metadata = JSON.parse(values.metadata);
    } catch {
      throw new UsageError("--metadata must be a JSON object");
    }
  }

  const files = positionals.map((file) => {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(file);
    } catch (error) {
      throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { name: path.basename(file), base64: bytes.toString("base64") };
  });
  const body = { project: values.project, name: values.name, type: values.type, metadata, files };
  let response: Response;
  try {
    response = await fetch(`${baseUrl}/v1/preview/artifacts`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw new Error(`cannot reach ${baseUrl}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`upload failed with HTTP ${response.status}: ${text}`);
  const artifact = JSON.parse(text) as { version: string; files: { name: string; size: number }[]; url: string };
  for (const file of artifact.files) console.log(`${file.name}\t${file.size} bytes`);
  console.log(`Uploaded ${values.project}/${values.name}:${artifact.version}`);
  console.log(artifact.url);
}
