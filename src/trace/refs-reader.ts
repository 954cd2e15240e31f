import { TraceBadRequest, TraceError, TraceNotFound } from "../store/trace/errors.js";
import { parseJsonLossless } from "./json/lossless.js";
import { isJsonObject } from "../store/trace/object-class.js";
import type { ObjectService } from "./objects.js";
import { isWeaveRefString, parseWeaveRef, type WeaveRef } from "../store/trace/refs.js";
import type { TableService } from "./tables.js";

export const MAX_REFS_PER_BATCH = 1000;
const DELETED = Symbol("deleted");

/** Where a walk along a ref's extra path stands: at a value, or at a whole table not loaded yet. */
type Cursor = { value: unknown } | { table: { projectId: string; digest: string } };

/**
 * Resolves Weave refs to values (`docs/api/trace.md#refs-read`): object and op refs at a digest, `latest`,
 * `v<N>` or an alias, table refs, and extra paths through dict keys, attributes, list indexes and
 * table row ids. A deleted object version reads as null. Refs of another entity are not found.
 * `/refs/read_batch` uses it; the calls API reads through `tryReadBatch`.
 */
export class RefReader {
  constructor(
    private readonly objects: ObjectService,
    private readonly tables: TableService,
  ) {}

  async readBatch(entity: string, refs: string[]): Promise<unknown[]> {
    if (refs.length > MAX_REFS_PER_BATCH) throw new TraceBadRequest(`Too many refs: at most ${MAX_REFS_PER_BATCH} per request`);
    const parsed = refs.map(parseWeaveRef);
    // Refs of one batch often share their object (rows of one dataset): read each version once.
    const objectValues = new Map<string, Promise<unknown>>();
    const values: unknown[] = [];
    for (let i = 0; i < parsed.length; i++) values.push(await this.resolve(entity, parsed[i] as WeaveRef, refs[i] as string, objectValues));
    return values;
  }

  /**
   * As `readBatch`, but a ref that cannot be resolved (malformed, missing, another entity's, a
   * call ref) reads as undefined instead of failing the batch; a deleted object still reads as null.
   * The calls API's `expand_columns` and feedback's AnnotationSpec checks read refs this way.
   */
  async tryReadBatch(entity: string, refs: string[]): Promise<unknown[]> {
    const objectValues = new Map<string, Promise<unknown>>();
    const values: unknown[] = [];
    for (const ref of refs) {
      try {
        values.push(await this.resolve(entity, parseWeaveRef(ref), ref, objectValues));
      } catch (error) {
        if (!(error instanceof TraceError)) throw error;
        values.push(undefined);
      }
    }
    return values;
  }

  async read(entity: string, ref: string): Promise<unknown> {
    return this.resolve(entity, parseWeaveRef(ref), ref, new Map());
  }

  private async resolve(entity: string, ref: WeaveRef, uri: string, objectValues: Map<string, Promise<unknown>>): Promise<unknown> {
    const projectId = `${ref.entity}/${ref.project}`;
    let cursor: Cursor;
    switch (ref.kind) {
      case "call":
        throw new TraceBadRequest("Call refs not supported");
      case "table":
        if (ref.entity !== entity) throw new TraceNotFound(`Table ${ref.digest} not found`);
        cursor = { table: { projectId, digest: ref.digest } };
        break;
      default: {
        if (ref.entity !== entity) throw new TraceNotFound(`Obj ${ref.name}:${ref.version} not found`);
        const key = `${projectId}\u0000${ref.name}\u0000${ref.version}`;
        let value = objectValues.get(key);
        if (!value) {
          value = this.objectValue(projectId, ref.name, ref.version);
          objectValues.set(key, value);
        }
        const resolved = await value;
        if (resolved === DELETED) return null;
        cursor = { value: resolved };
      }
    }
    for (let i = 0; i < ref.extra.length; i += 2) {
      cursor = await this.step(entity, cursor, ref.extra[i] as string, ref.extra[i + 1] as string, uri);
    }
    return "value" in cursor ? cursor.value : this.tables.readAll(cursor.table.projectId, cursor.table.digest);
  }

  /** An object version's value, or DELETED; 404 when it never existed. */
  private async objectValue(projectId: string, name: string, version: string): Promise<unknown> {
    const found = await this.objects.find(projectId, name, version);
    if (!found) throw new TraceNotFound(`Obj ${name}:${version} not found`);
    return found.deletedAt !== null ? DELETED : parseJsonLossless(found.valDump ?? "null");
  }

  private async step(entity: string, cursor: Cursor, edge: string, arg: string, uri: string): Promise<Cursor> {
    if (edge === "id") {
      const table = "table" in cursor ? cursor.table : this.tableOf(entity, cursor.value);
      return { value: await this.tables.readRow(table.projectId, arg) };
    }
    const value = "value" in cursor ? cursor.value : await this.tables.readAll(cursor.table.projectId, cursor.table.digest);
    if (edge === "index") {
      const index = Number(arg);
      const item = Array.isArray(value) ? value[index < 0 ? value.length + index : index] : undefined;
      if (item === undefined) throw new TraceNotFound(`Index ${arg} not found in ${uri}`);
      return { value: item };
    }
    if (!isJsonObject(value) || !Object.hasOwn(value, arg)) throw new TraceNotFound(`Key '${arg}' not found in ${uri}`);
    return { value: value[arg] };
  }

  private tableOf(entity: string, value: unknown): { projectId: string; digest: string } {
    if (isWeaveRefString(value)) {
      const ref = parseWeaveRef(value);
      if (ref.kind === "table") {
        if (ref.entity !== entity) throw new TraceNotFound(`Table ${ref.digest} not found`);
        return { projectId: `${ref.entity}/${ref.project}`, digest: ref.digest };
      }
    }
    throw new TraceBadRequest("invalid data layout encountered, expected TableRef when resolving id");
  }
}
