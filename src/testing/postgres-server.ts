import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/**
 * A throwaway PostgreSQL cluster for the test suite, started from the machine's own PostgreSQL
 * binaries (Debian's `postgresql` package) in a temporary directory.
 */
export interface TempPostgres {
  url: string;
  stop(): void;
}

export function findPostgresBinDir(): string | undefined {
  const onPath = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).stdout.trim();
  if (onPath) return path.dirname(fs.realpathSync(onPath));
  const root = "/usr/lib/postgresql";
  if (!fs.existsSync(root)) return undefined;
  const versions = fs.readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const dir = path.join(root, version, "bin");
    if (fs.existsSync(path.join(dir, "initdb"))) return dir;
  }
  return undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export async function startTempPostgres(binDir: string): Promise<TempPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-pg-"));
  const dataDir = path.join(dir, "data");
  const port = await freePort();
  // PostgreSQL refuses to run as root; the Debian package creates a `postgres` user for it.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync("chown", ["-R", "postgres", dir]);
  const run = (binary: string, args: string[]) => {
    const command = path.join(binDir, binary);
    const [file, fileArgs] = asRoot ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
    execFileSync(file, fileArgs, { stdio: "pipe", cwd: dir });
  };
  run("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const options = [`-p ${port}`, `-k ${dir}`, "-c listen_addresses=127.0.0.1", "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=300"].join(" ");
  run("pg_ctl", ["-D", dataDir, "-o", options, "-l", path.join(dir, "server.log"), "-w", "start"]);
  // Once this process is gone, however it ended, a detached watchdog stops the cluster and removes
  // its folder: a test run stopped by a timeout, Ctrl-C or a kill never reaches `stop` below, and
  // each such run used to leave a PostgreSQL running. (After `stop`, it finds nothing left to do.)
  const watchdog = ['while kill -0 "$1" 2>/dev/null; do sleep 1; done', 'if [ "$5" = 1 ]; then runuser -u postgres -- "$4" -D "$2" -m immediate -w stop; else "$4" -D "$2" -m immediate -w stop; fi', 'rm -rf "$3"'].join("\n");
  spawn("sh", ["-c", watchdog, "watchdog", String(process.pid), dataDir, dir, path.join(binDir, "pg_ctl"), asRoot ? "1" : "0"], { detached: true, stdio: "ignore" }).unref();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
