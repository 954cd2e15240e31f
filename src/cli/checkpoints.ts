import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { parseCommandArgs, UsageError } from "./args.js";
import { fetchServer, serverConnection, serverConnectionHelp, serverConnectionOptions } from "./server-connection.js";

export const checkpointsUsage = `flywheel checkpoints download --model-id ID --step N [--format peft|merged|gguf] [--out FILE]
flywheel checkpoints import --model-id ID DIR
  downloads a checkpoint of a trained model: peft (default) is its LoRA adapter as a .tar.gz
  (adapter_config.json + adapter_model.safetensors), merged a Hugging Face model directory with
  the adapter merged in (.tar.gz), gguf one GGUF file of the merged model for llama.cpp. Writes
  to --out or to the server's file name in the current directory and prints the path last.
  import uploads a PEFT LoRA adapter directory (adapter_config.json + adapter_model.safetensors,
  made by PEFT's save_pretrained) as an artifact and makes it the model's next checkpoint, then
  prints the checkpoint's model name last.
  ${serverConnectionHelp}`;

const FORMATS = ["peft", "merged", "gguf"];

export async function checkpointsCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === "import") return importCommand(rest);
  if (action !== "download") throw new UsageError(checkpointsUsage);
  const { values } = parseCommandArgs(rest, { "model-id": { type: "string" }, step: { type: "string" }, format: { type: "string" }, out: { type: "string" }, ...serverConnectionOptions });
  const modelId = values["model-id"];
  if (!modelId) throw new UsageError("checkpoints download needs --model-id ID");
  if (values.step === undefined || !/^\d+$/.test(values.step)) throw new UsageError("checkpoints download needs --step N (a step number)");
  const format = values.format ?? "peft";
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}, got '${format}'`);
  const { baseUrl, apiKey } = serverConnection(values);

  const url = `/v1/preview/models/${encodeURIComponent(modelId)}/checkpoints/${values.step}/download?format=${format}`;
  const response = await fetchServer(baseUrl, url, { headers: { authorization: `Bearer ${apiKey}` } });
  if (!response.ok || !response.body) throw new Error(`download failed with HTTP ${response.status}: ${await response.text()}`);
  const out = path.resolve(values.out ?? fileNameOf(response.headers.get("content-disposition")) ?? `checkpoint-${values.step}-${format}`);
  const partial = `${out}.partial`;
  try {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), fs.createWriteStream(partial));
    fs.renameSync(partial, out);
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  }
  console.log(`Wrote ${fs.statSync(out).size} bytes`);
  console.log(out);
}

/** The file name a Content-Disposition header proposes, without any directory part. */
function fileNameOf(header: string | null): string | undefined {
  const match = header && /filename="([^"]+)"/.exec(header);
  return match ? path.basename(match[1]!) : undefined;
}

const ADAPTER_FILES = ["adapter_config.json", "adapter_model.safetensors"];

async function importCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs(args, { "model-id": { type: "string" }, ...serverConnectionOptions }, true);
  const modelId = values["model-id"];
  if (!modelId) throw new UsageError("checkpoints import needs --model-id ID");
  if (positionals.length !== 1) throw new UsageError("checkpoints import needs one adapter directory");
  const dir = positionals[0]!;
  const files = ADAPTER_FILES.map((name) => {
    const file = path.join(dir, name);
    if (!fs.existsSync(file)) throw new UsageError(`${dir} has no ${name}: pass a directory written by PEFT's save_pretrained`);
    return { name, base64: fs.readFileSync(file).toString("base64") };
  });
  const { baseUrl, apiKey } = serverConnection(values);
  const call = async (method: string, url: string, body?: unknown) => {
    const response = await fetchServer(baseUrl, url, { method, headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${url} failed with HTTP ${response.status}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const model = await call("GET", `/v1/preview/models/${encodeURIComponent(modelId)}`);
  const artifact = await call("POST", "/v1/preview/artifacts", { project: model.project, name: `${String(model.name)}-adapter`, type: "lora", files });
  const checkpoint = await call("POST", `/v1/preview/models/${encodeURIComponent(modelId)}/checkpoints/import`, { artifact_url: artifact.url });
  console.log(`Uploaded ${String(artifact.url)}`);
  console.log(`Imported as step ${String(checkpoint.step)}`);
  console.log(String(checkpoint.name));
}
