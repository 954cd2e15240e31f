import pg from "pg";
import { findPostgresBinDir, startTempPostgres, type TempPostgres } from "./postgres-server.js";

/**
 * Makes PostgreSQL available to every test file as TEST_DATABASE_URL (an admin URL; each test store
 * creates its own database). A URL given by the caller is used as is; otherwise a private cluster
 * is started from the local PostgreSQL binaries. Without binaries the PostgreSQL variants are
 * skipped, unless FLYWHEEL_REQUIRE_POSTGRES=1 (as in CI) makes that an error.
 */
let cluster: TempPostgres | undefined;

export async function setup(): Promise<void> {
  if (!process.env.TEST_DATABASE_URL) {
    const binDir = findPostgresBinDir();
    if (binDir) {
      cluster = await startTempPostgres(binDir);
      process.env.TEST_DATABASE_URL = cluster.url;
    } else if (process.env.FLYWHEEL_REQUIRE_POSTGRES === "1") {
      throw new Error("FLYWHEEL_REQUIRE_POSTGRES=1 but no PostgreSQL binaries were found (install Debian's postgresql package)");
    } else {
      console.warn("\n*** PostgreSQL not found: tests run on SQLite only. Install PostgreSQL or set TEST_DATABASE_URL. ***\n");
      return;
    }
  }
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  await client.query("select 1");
  await client.end();
}

export async function teardown(): Promise<void> {
  cluster?.stop();
}
