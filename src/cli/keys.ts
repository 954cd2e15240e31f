import { loadConfig } from "../config.js";
import { openStore } from "../store/db.js";
import { createApiKey, listApiKeys, revokeApiKey } from "../store/keys.js";
import { parseCommandArgs, UsageError } from "./args.js";

export const keysUsage = `flywheel keys create --entity NAME [--name LABEL]   prints the new key as the last line
flywheel keys create --role worker [--name LABEL]   a key for training workers (the worker protocol only)
flywheel keys list [--entity NAME]
flywheel keys revoke ID_OR_PREFIX
(all take --data-dir DIR; DATABASE_URL selects PostgreSQL)`;

export async function keysCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseCommandArgs(rest, { entity: { type: "string" }, name: { type: "string" }, role: { type: "string" }, "data-dir": { type: "string" } }, true);
  const config = loadConfig({ "data-dir": values["data-dir"] });
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    switch (action) {
      case "create": {
        const role = values.role ?? "user";
        if (role !== "user" && role !== "worker") throw new UsageError(`--role must be user or worker, got '${role}'`);
        if (role === "user" && !values.entity) throw new UsageError("keys create needs --entity NAME (or --role worker for a training worker's key)");
        const created = await createApiKey(store.db, values.entity ?? "default", { name: values.name, role });
        console.log(
          role === "worker"
            ? `Created worker key ${created.id}: it takes training jobs of every entity through /v1/worker and is refused by the public API. It is shown only this once:`
            : `Created key ${created.id} for entity '${created.entity}'. It is shown only this once:`,
        );
        console.log(created.key);
        return;
      }
      case "list": {
        const keys = await listApiKeys(store.db, values.entity);
        if (keys.length === 0) {
          console.log("no keys");
          return;
        }
        for (const key of keys) {
          const state = key.revoked_at ? `revoked ${key.revoked_at}` : "active";
          console.log([key.id, key.role === "worker" ? "(worker)" : key.entity, `${key.key_prefix}…`, key.created_at, state, key.name ?? ""].join("\t"));
        }
        return;
      }
      case "revoke": {
        const target = positionals[0];
        if (!target) throw new UsageError("keys revoke needs the key's id or prefix (see flywheel keys list)");
        const revoked = await revokeApiKey(store.db, target);
        if (!revoked) throw new UsageError(`no key matches '${target}'`);
        console.log(`Revoked key ${revoked.id} of entity '${revoked.entity}'`);
        return;
      }
      default:
        throw new UsageError(keysUsage);
    }
  } finally {
    await store.close();
  }
}
