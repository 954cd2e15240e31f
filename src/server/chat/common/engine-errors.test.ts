import { describe, expect, it } from "vitest";
import type { GenerateEvent } from "../../../engine/api.js";
import { EngineError } from "../../../engine/runtime/errors.js";
import { ApiError } from "../../errors.js";
import { chatErrorOf, withChatErrors } from "./engine-errors.js";

describe("engine failures in the chat endpoint", () => {
  it("answers refused requests with 400 and stopped engines with 503, keeping other errors", () => {
    expect(chatErrorOf(new EngineError("unsupported", "LoRA adapters are not available"))).toMatchObject({ status: 400, message: "LoRA adapters are not available" });
    expect(chatErrorOf(new EngineError("invalid_request", "bad token"))).toMatchObject({ status: 400 });
    expect(chatErrorOf(new EngineError("worker_failed", "stopped"))).toMatchObject({ status: 503, options: { type: "ServiceUnavailableError" } });
    expect(chatErrorOf(new EngineError("closed", "closed"))).toBeInstanceOf(ApiError);
    expect(chatErrorOf(new EngineError("non_finite_model", "NaN logits"))).toMatchObject({ status: 409, options: { type: "ConflictError" } });
    const internal = new EngineError("internal", "oops");
    expect(chatErrorOf(internal)).toBe(internal);
    const other = new TypeError("x");
    expect(chatErrorOf(other)).toBe(other);
  });

  it("maps the failure of a stream after its first events", async () => {
    async function* failing(): AsyncIterable<GenerateEvent> {
      yield { type: "started", promptTokenIds: [1], cachedTokens: 0, promptLogprobs: null };
      throw new EngineError("worker_failed", "The engine thread stopped");
    }
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const event of withChatErrors(failing())) seen.push(event.type);
      })(),
    ).rejects.toMatchObject({ status: 503, message: "The engine thread stopped" });
    expect(seen).toEqual(["started"]);
  });
});
