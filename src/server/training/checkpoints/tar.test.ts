import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { buffer } from "node:stream/consumers";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir } from "../../../testing/stores.js";
import { tarGzStream, tarHeader } from "./tar.js";

const root = makeTempDir("flywheel-tar-");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("tarGzStream", () => {
  it("writes an archive that the system's tar lists and extracts byte for byte", async () => {
    const big = Buffer.alloc(700_001, 7);
    fs.writeFileSync(path.join(root, "big.bin"), big);
    const archive = await buffer(
      tarGzStream([
        { name: "dir/big.bin", source: { file: path.join(root, "big.bin") } },
        { name: "dir/small.json", source: { bytes: Buffer.from('{"a":1}\n') } },
        { name: "dir/empty", source: { bytes: new Uint8Array(0) } },
      ]),
    );
    const file = path.join(root, "a.tar.gz");
    fs.writeFileSync(file, archive);
    const out = path.join(root, "out");
    fs.mkdirSync(out);
    const run = spawnSync("tar", ["-xzf", file, "-C", out], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(fs.readFileSync(path.join(out, "dir", "big.bin")).equals(big)).toBe(true);
    expect(fs.readFileSync(path.join(out, "dir", "small.json"), "utf8")).toBe('{"a":1}\n');
    expect(fs.statSync(path.join(out, "dir", "empty")).size).toBe(0);
  });

  it("errors the stream when a file cannot be read, and refuses names ustar cannot hold", async () => {
    await expect(buffer(tarGzStream([{ name: "x", source: { file: path.join(root, "missing") } }]))).rejects.toThrow(/ENOENT/);
    expect(() => tarHeader("n".repeat(101), 0)).toThrow(/longer than 100 bytes/);
  });
});
