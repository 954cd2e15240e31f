import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../testing/app.js";
import { UI_CONTENT_SECURITY_POLICY } from "./routes.js";

/** Folders the tests write, removed after them. */
const folders: string[] = [];
const tempFolder = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  folders.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
});

/** A built UI as src/ui/build.mjs lays it out, small enough to check byte for byte. */
function writeUiBuild(): string {
  const dir = tempFolder("flywheel-ui-");
  fs.mkdirSync(path.join(dir, "assets"));
  fs.writeFileSync(path.join(dir, "index.html"), '<meta name="flywheel-trace-base-path" content="%TRACE_BASE_PATH%"><script type="module" src="/assets/main-ABC.js"></script>');
  fs.writeFileSync(path.join(dir, "assets", "main-ABC.js"), "console.log('hi')");
  fs.writeFileSync(path.join(dir, "assets", "main-ABC.js.gz"), zlib.gzipSync("console.log('hi')"));
  fs.writeFileSync(path.join(dir, "assets", "main-ABC.css"), "body{}");
  return dir;
}

describe("web UI serving", () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it("serves index.html with a strict CSP, revalidated, and the trace base path filled in", async () => {
    t = await startTestApp("sqlite", { uiDir: writeUiBuild(), env: { FLYWHEEL_TRACE_BASE_PATH: "/weave" } });
    const res = await t.app.inject({ method: "GET", url: "/" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.headers["content-security-policy"]).toBe(UI_CONTENT_SECURITY_POLICY);
    expect(UI_CONTENT_SECURITY_POLICY).toMatch(/^default-src 'self';/);
    expect(res.headers["cache-control"]).toBe("no-cache");
    expect(res.body).toContain('content="/weave"');
    expect(res.body).not.toContain("%TRACE_BASE_PATH%");
  });

  it("serves hashed assets cached for a year, gzipped to clients that accept it", async () => {
    t = await startTestApp("sqlite", { uiDir: writeUiBuild() });
    const gzipped = await t.app.inject({ method: "GET", url: "/assets/main-ABC.js", headers: { "accept-encoding": "gzip, br" } });
    expect(gzipped.statusCode).toBe(200);
    expect(gzipped.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(gzipped.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(zlib.gunzipSync(gzipped.rawPayload).toString()).toBe("console.log('hi')");
    const plain = await t.app.inject({ method: "GET", url: "/assets/main-ABC.js" });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body).toBe("console.log('hi')");
    const css = await t.app.inject({ method: "GET", url: "/assets/main-ABC.css", headers: { "accept-encoding": "gzip" } });
    expect(css.headers["content-type"]).toBe("text/css; charset=utf-8");
    expect(css.body).toBe("body{}");
  });

  it("answers unknown assets with 404 and a missing build with 503, as JSON errors", async () => {
    t = await startTestApp("sqlite", { uiDir: writeUiBuild() });
    const missing = await t.app.inject({ method: "GET", url: "/assets/../index.html" });
    expect(missing.statusCode).toBe(404);
    const unknown = await t.app.inject({ method: "GET", url: "/assets/nope.js" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().detail).toMatch(/No UI asset/);
    await t.close();
    t = await startTestApp("sqlite", { uiDir: tempFolder("flywheel-no-ui-") });
    const unbuilt = await t.app.inject({ method: "GET", url: "/" });
    expect(unbuilt.statusCode).toBe(503);
    expect(unbuilt.json().detail).toMatch(/npm run build/);
  });

  it("leaves the API as it was: the UI needs no key, the API still does", async () => {
    t = await startTestApp("sqlite", { uiDir: writeUiBuild() });
    expect((await t.app.inject({ method: "GET", url: "/" })).statusCode).toBe(200);
    expect((await t.app.inject({ method: "GET", url: "/v1/preview/projects" })).statusCode).toBe(401);
  });
});
