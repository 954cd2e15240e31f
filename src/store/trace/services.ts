import type { BlobStore } from "../blobs.js";
import type { Store } from "../db.js";
import { FileService } from "./files.js";
import { ObjectService } from "./objects.js";
import { RefReader } from "./refs-reader.js";
import { SqlFileRepository } from "./sql/files.js";
import { SqlObjectLabelRepository } from "./sql/object-labels.js";
import { SqlObjectRepository } from "./sql/objects.js";
import { SqlTableRepository } from "./sql/tables.js";
import { TableService } from "./tables.js";

/** Everything the trace-object routes use, built once per app on one store. */
export interface TraceObjectServices {
  objects: ObjectService;
  tables: TableService;
  files: FileService;
  /** Resolves `weave:///` refs; `readBatch(entity, refs)` also serves the calls API's expand_columns. */
  refs: RefReader;
}

export function createTraceObjectServices(store: Pick<Store, "db" | "dialect">, blobs: BlobStore): TraceObjectServices {
  const objects = new ObjectService(new SqlObjectRepository(store.db, store.dialect), new SqlObjectLabelRepository(store.db));
  const tables = new TableService(new SqlTableRepository(store.db));
  const files = new FileService(new SqlFileRepository(store.db), blobs);
  return { objects, tables, files, refs: new RefReader(objects, tables) };
}
