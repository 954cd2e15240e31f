import net from "node:net";
import { describe, expect, it } from "vitest";
import { runExample } from "../src/testing/examples.js";

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** What a newcomer sees before the server is ready: one clear message, no stack trace. */
describe("the examples' start-up checks", () => {
  it("says how to start the server when none answers", async () => {
    const result = await runExample("chat.ts", { FLYWHEEL_BASE_URL: `http://127.0.0.1:${await closedPort()}`, FLYWHEEL_API_KEY: "some-key-0123456789" });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("No Flywheel server answers at http://127.0.0.1:");
    expect(result.stderr).toContain("npm start");
    expect(result.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });

  it("says where the key comes from when FLYWHEEL_API_KEY is missing", async () => {
    const result = await runExample("rl.ts", {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("FLYWHEEL_API_KEY is not set");
    expect(result.stderr).toContain("keys create --entity default");
  });
});
