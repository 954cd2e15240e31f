import fs from "node:fs";
import path from "node:path";
import { parseCommandArgs, UsageError } from "./args.js";
import { fetchServer, serverConnection, serverConnectionHelp, serverConnectionOptions } from "./server-connection.js";

export const artifactsUsage = `flywheel artifacts upload --project P --name N [--type T] [--metadata JSON] FILE...
  uploads the files as the next version of artifact P/N (for SFT: train.jsonl and optionally
  metadata.json) and prints its training_data_url as the last line.
  ${serverConnectionHelp}`;

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
      ...serverConnectionOptions,
    },
    true,
  );
  if (!values.project || !values.name) throw new UsageError("artifacts upload needs --project P and --name N");
  if (positionals.length === 0) throw new UsageError("artifacts upload needs at least one FILE");
  const { baseUrl, apiKey } = serverConnection(values);
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
  const response = await fetchServer(baseUrl, "/v1/preview/artifacts", {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`upload failed with HTTP ${response.status}: ${text}`);
  const artifact = JSON.parse(text) as { version: string; files: { name: string; size: number }[]; url: string };
  for (const file of artifact.files) console.log(`${file.name}\t${file.size} bytes`);
  console.log(`Uploaded ${values.project}/${values.name}:${artifact.version}`);
  console.log(artifact.url);
}
