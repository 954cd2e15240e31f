import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../testing/app.js";
import { type TraceClient, traceClient } from "../../testing/trace.js";

type Weave = typeof import("weave");

/**
 * The published weave npm SDK (0.11.1, a dev dependency) publishing objects, ops, datasets,
 * prompts and images to this server over HTTP and reading them back — the object half of the SDK
 * conformance that the calls side completes.
 */
describe("the weave SDK against the trace-object routes", () => {
  let t: TestApp;
  let c: TraceClient;
  let weave: Weave;
  let client: Awaited<ReturnType<Weave["init"]>>;
  const saved = { url: process.env.WF_TRACE_SERVER_URL, key: process.env.WANDB_API_KEY };
  beforeAll(async () => {
    t = await startTestApp("sqlite");
    c = traceClient(t, t.keys.alice);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = t.app.server.address() as AddressInfo;
    process.env.WF_TRACE_SERVER_URL = `http://127.0.0.1:${port}/trace`;
    process.env.WANDB_API_KEY = t.keys.alice;
    weave = await import("weave");
    client = await weave.init("alice/sdk");
  });
  afterAll(async () => {
    process.env.WF_TRACE_SERVER_URL = saved.url;
    process.env.WANDB_API_KEY = saved.key;
    await t.close();
  });

  it("publishes plain values and reads them back", async () => {
    const ref = await client.publish({ answer: 42, nested: { list: [1, "two", null] } }, "plain-value");
    expect(ref.uri()).toMatch(/^weave:\/\/\/alice\/sdk\/object\/plain-value:[A-Za-z0-9]{43}$/);
    expect(await client.get(ref)).toEqual({ answer: 42, nested: { list: [1, "two", null] } });
    const stored = (await c.post("/obj/read", { project_id: "alice/sdk", object_id: "plain-value", digest: ref.digest })).json().obj;
    expect(stored.digest).toBe(ref.digest);
  });

  it("publishes a dataset as a table and loads its rows", async () => {
    const dataset = new weave.Dataset({
      name: "grammar",
      rows: [
        { sentence: "He no likes it.", fix: "He doesn't like it." },
        { sentence: "She goed.", fix: "She went." },
      ],
    });
    const ref = await dataset.save();
    const loaded = await client.get(ref);
    expect(loaded).toBeInstanceOf(weave.Dataset);
    // The SDK attaches a row ref to each loaded row; compare the row values.
    expect(loaded.rows.rows.map(({ __savedRef, ...row }: Record<string, unknown>) => row)).toEqual([
      { sentence: "He no likes it.", fix: "He doesn't like it." },
      { sentence: "She goed.", fix: "She went." },
    ]);
    const stored = (await c.post("/obj/read", { project_id: "alice/sdk", object_id: ref.objectId, digest: ref.digest })).json().obj;
    expect(stored).toMatchObject({ base_object_class: "Dataset", leaf_object_class: "Dataset", val: { _type: "Dataset", rows: expect.stringMatching(/^weave:\/\/\/alice\/sdk\/table\//) } });
    // The row refs the SDK builds resolve on the server.
    const rowRef = await (dataset.getRow(1) as unknown as { __savedRef: Promise<{ uri(): string }> }).__savedRef;
    expect((await c.post("/refs/read_batch", { refs: [rowRef.uri()] })).json().vals).toEqual([{ sentence: "She goed.", fix: "She went." }]);
  });

  it("publishes prompts and reads them back as prompt objects", async () => {
    const prompt = new weave.StringPrompt({ name: "greeting", content: "Hello {name}!" });
    const ref = await client.publish(prompt);
    const loaded = await client.get(ref);
    expect(loaded).toBeInstanceOf(weave.StringPrompt);
    expect(loaded.format({ name: "Ada" })).toBe("Hello Ada!");
    const stored = (await c.post("/objs/query", { project_id: "alice/sdk", filter: { base_object_classes: ["Prompt"] } })).json().objs;
    expect(stored.map((o: { leaf_object_class: string }) => o.leaf_object_class)).toEqual(["StringPrompt"]);
  });

  it("publishes ops with their source file under the digest the SDK computed", async () => {
    const add = weave.op(function addNumbers(a: number, b: number) {
      return a + b;
    });
    const ref = (await client.publish(add)) as { objectId: string; digest: string };
    const stored = (await c.post("/obj/read", { project_id: "alice/sdk", object_id: ref.objectId, digest: ref.digest })).json().obj;
    expect(stored.kind).toBe("op");
    const source = await c.post("/file/content", { project_id: "alice/sdk", digest: stored.val.files["obj.py"] });
    expect(source.statusCode).toBe(200);
    expect(source.body).toContain("a + b");
  });

  it("uploads images whose client-side digest names the stored file", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const ref = await client.publish({ picture: weave.weaveImage({ data: png, imageType: "png" }) }, "with-image");
    const stored = (await c.post("/obj/read", { project_id: "alice/sdk", object_id: "with-image", digest: ref.digest })).json().obj;
    const fileDigest = stored.val.picture.files["image.png"];
    const content = await c.post("/file/content", { project_id: "alice/sdk", digest: fileDigest });
    expect(content.statusCode).toBe(200);
    expect(content.rawPayload.equals(png)).toBe(true);
  });
});
