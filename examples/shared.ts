/**
 * What every example needs before its first request: where the server is, the API key, the model
 * to use, and a clear message (instead of a stack trace) when the server is not running, the key is
 * missing or wrong, or the model is not served.
 *
 *   FLYWHEEL_BASE_URL       the server (default http://127.0.0.1:8000)
 *   FLYWHEEL_API_KEY        an API key: the one `npm start` printed on its first start, or one from
 *                           `npm run flywheel -- keys create --entity default`
 *   FLYWHEEL_EXAMPLE_MODEL  the base model to use (default flywheel/tiny-chat)
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import OpenAI from "openai";

export interface ExampleSettings {
  baseUrl: string;
  apiKey: string;
  model: string;
}

export interface Connection extends ExampleSettings {
  /** The OpenAI SDK pointed at Flywheel's `/v1`; its `post`/`get` also reach the training API. */
  client: OpenAI;
  /** The server's `/server_info`: version, database, served base models, trace API prefix. */
  server: { version: string; database: string; base_models: string[]; trace_base_path: string };
}

export const DEFAULT_MODEL = "flywheel/tiny-chat";

/** Prints the message and ends the process with status 1. */
export function fail(message: string): never {
  console.error(`\n${message}`);
  process.exit(1);
}

export function exampleSettings(env: NodeJS.ProcessEnv = process.env): ExampleSettings {
  const baseUrl = (env.FLYWHEEL_BASE_URL || "http://127.0.0.1:8000").replace(/\/+$/, "");
  const apiKey = env.FLYWHEEL_API_KEY?.trim();
  if (!apiKey) {
    fail(
      [
        "FLYWHEEL_API_KEY is not set. Use the key `npm start` printed on its first start:",
        "  export FLYWHEEL_API_KEY=fw_...",
        "Lost it? Make another one (the server may keep running):",
        "  npm run flywheel -- keys create --entity default",
      ].join("\n"),
    );
  }
  return { baseUrl, apiKey, model: env.FLYWHEEL_EXAMPLE_MODEL?.trim() || DEFAULT_MODEL };
}

/** Checks the server, the key and the model, and returns a client for them. */
export async function connect(): Promise<Connection> {
  const settings = exampleSettings();
  let info: Response;
  try {
    info = await fetch(`${settings.baseUrl}/server_info`, { headers: { authorization: `Bearer ${settings.apiKey}` } });
  } catch {
    fail(`No Flywheel server answers at ${settings.baseUrl}. Start one in another terminal with \`npm start\` (or set FLYWHEEL_BASE_URL).`);
  }
  if (info.status === 401) fail(`The server at ${settings.baseUrl} does not accept FLYWHEEL_API_KEY (unknown or revoked key).`);
  if (!info.ok) fail(`${settings.baseUrl}/server_info answered HTTP ${info.status}: is this a Flywheel server?`);
  const server = (await info.json()) as Connection["server"];

  const models = await fetch(`${settings.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${settings.apiKey}` } });
  if (models.status === 401) fail(`The server at ${settings.baseUrl} does not accept FLYWHEEL_API_KEY (unknown or revoked key).`);
  if (!models.ok) fail(`GET /v1/models answered HTTP ${models.status}: ${await models.text()}`);
  if (!server.base_models.includes(settings.model)) {
    fail(`The server does not serve the model '${settings.model}'. It serves: ${server.base_models.join(", ") || "(none)"}.\nSet FLYWHEEL_EXAMPLE_MODEL to one of them.`);
  }
  // maxRetries 0: an example should show a failure at once rather than retry it.
  const client = new OpenAI({ baseURL: `${settings.baseUrl}/v1`, apiKey: settings.apiKey, maxRetries: 0 });
  return { ...settings, client, server };
}

/** Runs an example's main function, turning an API error into one readable line. */
export function run(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof OpenAI.APIError) fail(`The server answered HTTP ${error.status ?? "?"}: ${error.message}`);
    fail(error instanceof Error ? (error.stack ?? error.message) : String(error));
  });
}

/** True when this module is the script node was started with (not imported by another example). */
export function isMain(moduleUrl: string): boolean {
  const entry = process.argv[1];
  return entry !== undefined && pathToFileURL(path.resolve(entry)).href === moduleUrl;
}
