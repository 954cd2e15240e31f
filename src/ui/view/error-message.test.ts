import { describe, expect, it } from "vitest";
import { errorMessageOf } from "./error-message.js";

describe("errorMessageOf", () => {
  it("reads each surface's error shape", () => {
    expect(errorMessageOf(401, '{"detail":"Invalid or revoked API key"}')).toBe("Invalid or revoked API key");
    expect(errorMessageOf(422, '{"detail":[{"loc":["query","limit"],"msg":"too big","type":"x"}]}')).toBe("query.limit: too big");
    expect(errorMessageOf(404, '{"reason":"Call not found"}')).toBe("Call not found");
    expect(errorMessageOf(400, '{"error":{"message":"bad model"}}')).toBe("bad model");
  });

  it("falls back to the status for bodies without a message", () => {
    expect(errorMessageOf(502, "")).toBe("The server answered 502");
    expect(errorMessageOf(500, "{}")).toBe("The server answered 500");
    expect(errorMessageOf(503, "gateway down")).toBe("503: gateway down");
  });
});
