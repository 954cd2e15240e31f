import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleServer, startExampleServer } from "../src/testing/examples.js";

describe("examples/sft.ts", () => {
  let server: ExampleServer;
  beforeAll(async () => {
    server = await startExampleServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** Two passes over the six conversations (six steps) on the fixture model: the loss falls. */
  it("uploads the data, trains, shows the loss falling and asks the trained model", async () => {
    const { code, stdout, stderr } = await server.runExample("sft.ts", { SFT_EPOCHS: "2" });
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^Uploaded 12 conversations as wandb-artifact:\/\/\/default\/sft-example\/flywheel-facts:v\d+$/m);
    expect(stdout).toMatch(/^SFT job \S+: 6 gradient steps$/m);
    const losses = [...stdout.matchAll(/^ {2}step +(\d+): loss (\S+)$/gm)].map((match) => Number(match[2]));
    expect(losses).toHaveLength(6);
    expect(losses.every(Number.isFinite)).toBe(true);
    expect(stdout).toMatch(/Mean loss of the first 1 steps \S+, of the last 1 \S+: it fell/);
    expect(losses.at(-1)!).toBeLessThan(losses[0]!);
    expect(stdout.match(/^> /gm)).toHaveLength(3);
  });
});
