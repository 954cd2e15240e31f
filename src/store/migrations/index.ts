import { type Kysely, type Migration, type MigrationProvider, Migrator } from "kysely";
import * as foundation from "./001-foundation.js";
import * as training from "./002-training.js";
import * as traceCalls from "./003-trace-calls.js";
import * as traceObjects from "./004-trace-objects.js";
import * as traceCallLeaves from "./005-trace-call-leaves.js";
import * as modelLineageLora from "./006-model-lineage-lora.js";
import * as storedResponses from "./007-stored-responses.js";
import * as traceSearch from "./008-trace-search.js";
import * as jobTokenLogprobs from "./009-job-token-logprobs.js";
import * as workerKeys from "./010-worker-keys.js";
import * as traceCallNumbers from "./011-trace-call-numbers.js";
import * as traceCallNumbersExact from "./012-trace-call-numbers-exact.js";

/**
 * The one ordered migration set, shared by SQLite and PostgreSQL. Append new migrations; never
 * edit one that has shipped. A migration imports only kysely and this folder (frozen.test.ts
 * checks): it keeps its own copy of any application logic it needs, so it runs as it shipped.
 */
const migrations: Record<string, Migration> = {
  "001-foundation": foundation,
  "002-training": training,
  "003-trace-calls": traceCalls,
  "004-trace-objects": traceObjects,
  "005-trace-call-leaves": traceCallLeaves,
  "006-model-lineage-lora": modelLineageLora,
  "007-stored-responses": storedResponses,
  "008-trace-search": traceSearch,
  "009-job-token-logprobs": jobTokenLogprobs,
  "010-worker-keys": workerKeys,
  "011-trace-call-numbers": traceCallNumbers,
  "012-trace-call-numbers-exact": traceCallNumbersExact,
};

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider(), migrationTableName: "flywheel_migrations", migrationLockTableName: "flywheel_migrations_lock" });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === "Error");
    throw new Error(`database migration ${failed?.migrationName ?? ""} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
