import { type ClientEnvironment, loadClientEnvironment } from "../config.js";
import { UsageError } from "./args.js";

/** The flags of commands that talk to a running server. */
export const serverConnectionOptions = { "base-url": { type: "string" }, "api-key": { type: "string" } } as const;

export const serverConnectionHelp = `The server is --base-url or FLYWHEEL_BASE_URL (http://127.0.0.1:8000); the key is --api-key, FLYWHEEL_API_KEY or WANDB_API_KEY.`;

/** The server's base URL (no trailing slash) and the API key, from flags or the environment. */
export function serverConnection(values: { "base-url"?: string; "api-key"?: string }, env: ClientEnvironment = loadClientEnvironment()): { baseUrl: string; apiKey: string } {
  const apiKey = values["api-key"] ?? env.apiKey;
  if (!apiKey) throw new UsageError("no API key: pass --api-key or set FLYWHEEL_API_KEY");
  const baseUrl = (values["base-url"] ?? env.baseUrl ?? "http://127.0.0.1:8000").replace(/\/+$/, "");
  return { baseUrl, apiKey };
}

/** `fetch` that names the server when it cannot be reached. */
export async function fetchServer(baseUrl: string, path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(`${baseUrl}${path}`, init);
  } catch (error) {
    throw new Error(`cannot reach ${baseUrl}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
