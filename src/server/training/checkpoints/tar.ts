import fs from "node:fs";
import { PassThrough, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";

/**
 * A gzip-compressed POSIX tar (ustar) archive written as a stream, one file after another, so a
 * download of gigabytes never sits in memory. Only regular files with plain names are needed here
 * (a checkpoint's files, a model directory), which ustar's 100-byte name field holds.
 */

export interface TarEntry {
  /** The path inside the archive, e.g. `model/config.json`. */
  name: string;
  /** A file on disk, or bytes in memory. */
  source: { file: string } | { bytes: Uint8Array };
}

const BLOCK = 512;

/** The archive of `entries` as a .tar.gz stream; a file that cannot be read errors the stream. */
export function tarGzStream(entries: readonly TarEntry[]): Readable {
  const tar = new PassThrough();
  const gzip = createGzip();
  void writeEntries(tar, entries).then(
    () => tar.end(),
    (error: unknown) => tar.destroy(error as Error),
  );
  tar.pipe(gzip);
  tar.on("error", (error) => gzip.destroy(error));
  return gzip;
}

async function writeEntries(out: PassThrough, entries: readonly TarEntry[]): Promise<void> {
  for (const entry of entries) {
    const size = "file" in entry.source ? (await fs.promises.stat(entry.source.file)).size : entry.source.bytes.byteLength;
    await write(out, tarHeader(entry.name, size));
    if ("file" in entry.source) {
      const file = fs.createReadStream(entry.source.file);
      await pipeline(file, out, { end: false });
    } else {
      await write(out, entry.source.bytes);
    }
    const padding = (BLOCK - (size % BLOCK)) % BLOCK;
    if (padding > 0) await write(out, new Uint8Array(padding));
  }
  // Two zero blocks end the archive.
  await write(out, new Uint8Array(2 * BLOCK));
}

function write(out: PassThrough, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    if (out.write(bytes)) resolve();
    else out.once("drain", resolve);
  });
}

/** One ustar header block for a regular file. */
export function tarHeader(name: string, size: number, mtime = Math.floor(Date.now() / 1000)): Buffer {
  if (Buffer.byteLength(name) > 100) throw new RangeError(`tar entry name '${name}' is longer than 100 bytes`);
  const header = Buffer.alloc(BLOCK);
  header.write(name, 0, 100, "utf8");
  header.write(octal(0o644, 8), 100, "ascii");
  header.write(octal(0, 8), 108, "ascii"); // uid
  header.write(octal(0, 8), 116, "ascii"); // gid
  header.write(octal(size, 12), 124, "ascii");
  header.write(octal(mtime, 12), 136, "ascii");
  header.write("        ", 148, "ascii"); // checksum field counts as spaces while summing
  header.write("0", 156, "ascii"); // regular file
  header.write("ustar\u000000", 257, "ascii");
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148, "ascii");
  return header;
}

/** A zero-padded octal field ending in NUL (a file size field holds up to 8 GiB; merged exports are sharded below that). */
function octal(value: number, width: number): string {
  const digits = value.toString(8);
  if (digits.length > width - 1) throw new RangeError(`tar field value ${value} does not fit in ${width} bytes`);
  return `${digits.padStart(width - 1, "0")}\u0000`;
}
