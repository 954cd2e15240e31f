import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { basicAuth, type TraceClient, traceClient } from "../../../testing/trace.js";

const digestOf = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("base64url").replaceAll("-", "X").replaceAll("_", "Y");

/** A multipart/form-data body written out by hand. */
function multipart(fields: { name: string; value: Buffer | string; filename?: string }[], boundary = "----flywheel-test-boundary"): { payload: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const field of fields) {
    const disposition = `form-data; name="${field.name}"${field.filename ? `; filename="${field.filename}"` : ""}`;
    const type = field.filename ? "Content-Type: application/octet-stream\r\n" : "";
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(field.value), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

describe.each(testDialects)("trace files on %s", (dialect) => {
  let t: TestApp;
  let c: TraceClient;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    c = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });

  const upload = (url: string, fields: Parameters<typeof multipart>[0]) => {
    const { payload, contentType } = multipart(fields);
    return c.request({ method: "POST", url, payload, headers: { "content-type": contentType } });
  };

  it("stores uploads under Weave's file digest and returns the exact bytes", async () => {
    const content = Buffer.concat([Buffer.from("def f():\n    return '--not a boundary--'\r\n"), Buffer.from([0, 255, 13, 10])]);
    const res = await upload("/file/create", [
      { name: "project_id", value: "alice/files" },
      { name: "file", value: content, filename: "obj.py" },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ digest: digestOf(content) });
    const again = await upload("/files/create", [
      { name: "project_id", value: "alice/files" },
      { name: "file", value: content, filename: "blob" },
      { name: "expected_digest", value: digestOf(content) },
    ]);
    expect(again.json()).toEqual(res.json());

    for (const url of ["/file/content", "/files/content"]) {
      const read = await c.post(url, { project_id: "alice/files", digest: digestOf(content) });
      expect(read.statusCode).toBe(200);
      expect(read.headers["content-type"]).toBe("application/octet-stream");
      expect(read.rawPayload.equals(content)).toBe(true);
    }
    for (const url of ["/files/query_stats", "/files/stats"]) {
      expect((await c.post(url, { project_id: "alice/files" })).json()).toEqual({ total_size_bytes: content.length });
    }
  });

  it("keeps files per project and answers unknown digests with 404", async () => {
    await upload("/file/create", [
      { name: "project_id", value: "alice/files-a" },
      { name: "file", value: "only in a", filename: "x" },
    ]);
    const elsewhere = await c.post("/file/content", { project_id: "alice/files-b", digest: digestOf("only in a") });
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.json()).toEqual({ reason: `File ${digestOf("only in a")} not found` });
    expect((await c.post("/files/query_stats", { project_id: "alice/empty" })).json()).toEqual({ total_size_bytes: 0 });
  });

  it("validates the form", async () => {
    const noFile = await upload("/file/create", [{ name: "project_id", value: "alice/files" }]);
    expect(noFile.statusCode).toBe(422);
    expect(noFile.json().detail[0]).toMatchObject({ loc: ["body", "file"], type: "missing" });
    const mismatch = await upload("/file/create", [
      { name: "project_id", value: "alice/files" },
      { name: "file", value: "abc", filename: "x" },
      { name: "expected_digest", value: digestOf("abd") },
    ]);
    expect(mismatch.statusCode).toBe(400);
    // Found by the fuzzer: a JSON array body is not a form.
    const jsonArray = await c.post("/file/create", [null]);
    expect(jsonArray.statusCode).toBe(415);
    const foreign = await upload("/file/create", [
      { name: "project_id", value: "bob/files" },
      { name: "file", value: "abc", filename: "x" },
    ]);
    expect(foreign.statusCode).toBe(404);
    const broken = await c.request({ method: "POST", url: "/file/create", payload: "--x\r\nno headers end", headers: { "content-type": "multipart/form-data; boundary=x" } });
    expect(broken.statusCode).toBe(422);
    expect((await c.post("/file/create", { project_id: "alice/files" })).statusCode).toBe(415);
  });

  it("accepts a real FormData upload over HTTP, as the SDKs send it", async () => {
    const served = await startTestApp(dialect);
    try {
      await served.app.listen({ port: 0, host: "127.0.0.1" });
      const { port } = served.app.server.address() as AddressInfo;
      const form = new FormData();
      form.append("project_id", "alice/files-http");
      form.append("file", new Blob([Buffer.from("image bytes \u00e9")]), "image.png");
      const res = await fetch(`http://127.0.0.1:${port}/trace/file/create`, { method: "POST", body: form, headers: { authorization: basicAuth(served.keys.alice) } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ digest: digestOf(Buffer.from("image bytes \u00e9")) });
    } finally {
      await served.close();
    }
  });
});
