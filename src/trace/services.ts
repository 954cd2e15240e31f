import type { BlobStore } from "../store/blobs.js";
import type { Store } from "../store/db.js";
import { AnnotationQueueService } from "./annotation-queues.js";
import { PredictionsAndScores } from "./evaluations/predictions.js";
import { EvaluationRuns } from "./evaluations/runs.js";
import { FileService } from "./files.js";
import { ObjectService } from "./objects.js";
import { RefReader } from "./refs-reader.js";
import { SqlAnnotationQueueRepository } from "../store/trace/sql/annotation-queues.js";
import { SqlFileRepository } from "../store/trace/sql/files.js";
import { SqlObjectLabelRepository } from "../store/trace/sql/object-labels.js";
import { SqlObjectRepository } from "../store/trace/sql/objects.js";
import { SqlTableRepository } from "../store/trace/sql/tables.js";
import { TableService } from "./tables.js";
import { SqlTraceCallStore, type TraceCallStore } from "../store/trace/trace-store.js";
import { V2ObjectResources } from "./v2-resources.js";

/** Everything the trace API stores and reads, built once per app on one store. */
export interface TraceServices {
  /** Calls, feedback and costs. */
  calls: TraceCallStore;
  objects: ObjectService;
  tables: TableService;
  files: FileService;
  /** Resolves `weave:///` refs (`/refs/read_batch`, expand_columns, AnnotationSpec checks). */
  refs: RefReader;
  annotationQueues: AnnotationQueueService;
  v2: V2ObjectResources;
  /** v2 evaluation runs, predictions and scores: calls underneath. */
  runs: EvaluationRuns;
  predictions: PredictionsAndScores;
}

export function createTraceServices(store: Store, blobs: BlobStore): TraceServices {
  const calls = new SqlTraceCallStore(store);
  const objects = new ObjectService(new SqlObjectRepository(store.db, store.dialect), new SqlObjectLabelRepository(store.db));
  const tables = new TableService(new SqlTableRepository(store.db));
  const files = new FileService(new SqlFileRepository(store.db), blobs);
  const annotationQueues = new AnnotationQueueService(new SqlAnnotationQueueRepository(store.db), calls);
  const v2 = new V2ObjectResources(objects, tables, files);
  return {
    calls,
    objects,
    tables,
    files,
    refs: new RefReader(objects, tables),
    annotationQueues,
    v2,
    runs: new EvaluationRuns(calls, v2),
    predictions: new PredictionsAndScores(calls, v2),
  };
}
