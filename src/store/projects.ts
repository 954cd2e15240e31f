import type { Kysely } from "kysely";
import type { Database } from "./schema.js";
import { traceDb } from "./trace/call-tables.js";

export interface EntityProject {
  name: string;
  /** How many trainable models the project holds. */
  models: number;
  /** Whether any trace call was stored in it. */
  traces: boolean;
}

/** At most this many trace projects are listed; the walk below costs one index probe per project. */
const MAX_TRACE_PROJECTS = 1000;

/**
 * The projects of an entity, from its models and from the trace store (where a project is the
 * `entity/project` prefix of each call's project_id), sorted by name.
 */
export async function listEntityProjects(db: Kysely<Database>, entity: string): Promise<EntityProject[]> {
  const projects = new Map<string, EntityProject>();
  const counts = await db
    .selectFrom("models")
    .select(["project", (eb) => eb.fn.countAll().as("count")])
    .where("entity", "=", entity)
    .groupBy("project")
    .execute();
  for (const row of counts) projects.set(row.project, { name: row.project, models: Number(row.count), traces: false });
  for (const name of await traceProjectsOf(db, entity)) {
    const known = projects.get(name);
    if (known) known.traces = true;
    else projects.set(name, { name, models: 0, traces: true });
  }
  return [...projects.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The distinct projects of `entity` among the trace calls, whose primary key starts with
 * project_id: a skip scan, one `min(project_id) > previous` per project, so a million calls in one
 * project cost one probe, not a scan. Both dialects compare these ids bytewise (the column is
 * collated "C" on PostgreSQL), and the character after '/' is '0'.
 */
async function traceProjectsOf(db: Kysely<Database>, entity: string): Promise<string[]> {
  const prefix = `${entity}/`;
  const end = `${entity}0`;
  const names: string[] = [];
  let previous = prefix;
  while (names.length < MAX_TRACE_PROJECTS) {
    const row = await traceDb(db)
      .selectFrom("trace_calls")
      .select((eb) => eb.fn.min("project_id").as("next"))
      .where("project_id", ">", previous)
      .where("project_id", "<", end)
      .executeTakeFirst();
    const next = row?.next as string | null | undefined;
    if (!next) break;
    names.push(next.slice(prefix.length));
    previous = next;
  }
  return names;
}
