import { createHash, randomUUID } from "node:crypto";
import type { ModelInfo } from "../../../engine/api.js";
import { flywheelVersion } from "../../../version.js";

/**
 * Ids and fingerprints of chat responses (`docs/api/chat.md#transport`, `docs/api/chat.md#response`,
 * `docs/api/chat.md#ids`).
 */

const randomHex = () => randomUUID().replaceAll("-", "");

/** `chatcmpl-` + the `X-Request-Id` header, else the body's `request_id`, else 32 random hex digits. */
export function completionId(headerRequestId: string | undefined, bodyRequestId: string | undefined): string {
  return `chatcmpl-${headerRequestId || bodyRequestId || randomHex()}`;
}

/** Tool call ids: `chatcmpl-tool-` + 32 random hex digits. */
export function toolCallId(): string {
  return `chatcmpl-tool-${randomHex()}`;
}

/**
 * `flywheel-<version>-<8 hex>`, the hash over what shapes the model's outputs (id, architecture,
 * context length, vocabulary): it changes when a deployment would sample differently.
 */
export function systemFingerprint(info: Pick<ModelInfo, "id" | "architecture" | "maxModelLen" | "vocabSize">): string {
  const hash = createHash("sha256")
    .update(JSON.stringify([info.id, info.architecture, info.maxModelLen, info.vocabSize]))
    .digest("hex");
  return `flywheel-${flywheelVersion}-${hash.slice(0, 8)}`;
}
