import { TraceNotFound } from "../store/trace/errors.js";
import type { FileService } from "./files.js";
import { isJsonObject } from "../store/trace/object-class.js";
import {
  datasetVal,
  evaluationVal,
  makeObjectId,
  MODEL_SYSTEM_KEYS,
  modelVal,
  OP_SOURCE_FILE_NAME,
  opVal,
  PLACEHOLDER_EVALUATE_OP_SOURCE,
  PLACEHOLDER_EVALUATION_SUMMARIZE_OP_SOURCE,
  PLACEHOLDER_OP_SOURCE,
  PLACEHOLDER_PREDICT_AND_SCORE_OP_SOURCE,
  PLACEHOLDER_SCORER_SUMMARIZE_OP_SOURCE,
  scorerVal,
} from "./object-layouts.js";
import type { ObjectService, ObjectVersion } from "./objects.js";
import { objectRefUri, parseWeaveRef, tableRefUri } from "../store/trace/refs.js";
import type { TableService } from "./tables.js";

export interface CreatedVersion {
  digest: string;
  objectId: string;
  versionIndex: number;
}

/** The fields every v2 read shares. */
export interface VersionHeader {
  objectId: string;
  digest: string;
  versionIndex: number;
  createdAt: string;
}

export interface Page {
  limit?: number;
  offset?: number;
}

type Kind = "op" | "Dataset" | "Scorer" | "Evaluation" | "Model";

/**
 * The v2 object API (`docs/api/trace.md#v2-objects`): ops, datasets, scorers, evaluations and models built
 * from plain fields into the shapes the SDKs publish, stored as ordinary object versions (so
 * `/obj/read`, refs and the SDKs see the same objects). Reads of an object of another kind are 404.
 */
export class V2ObjectResources {
  constructor(
    private readonly objects: ObjectService,
    private readonly tables: TableService,
    private readonly files: FileService,
  ) {}

  async createOp(projectId: string, input: { name?: string | null; sourceCode?: string | null }, wbUserId: string): Promise<CreatedVersion> {
    return this.publishOp(projectId, makeObjectId(input.name, "Op"), input.sourceCode || PLACEHOLDER_OP_SOURCE, wbUserId);
  }

  /**
   * Publishes an op under exactly this object id, as the SDKs publish theirs (`Evaluation.evaluate`
   * keeps its case; the v2 `/ops` route lower-cases names first).
   */
  async publishOp(projectId: string, objectId: string, sourceCode: string, wbUserId: string): Promise<CreatedVersion> {
    const fileDigest = (await this.files.create(projectId, Buffer.from(sourceCode, "utf8"))).digest;
    return this.objects.create({ projectId, objectId, val: opVal(fileDigest), wbUserId });
  }

  async readOp(projectId: string, objectId: string, digest: string): Promise<VersionHeader & { code: string }> {
    const version = await this.readKind(projectId, objectId, digest, "op");
    return { ...header(version), code: await this.sourceOf(projectId, version.val) };
  }

  async listOps(projectId: string, page: Page): Promise<(VersionHeader & { code: string })[]> {
    const versions = await this.objects.query(projectId, { isOp: true, latestOnly: true, ...page });
    return Promise.all(versions.map(async (version) => ({ ...header(version), code: await this.sourceOf(projectId, version.val) })));
  }

  async createDataset(projectId: string, input: { name?: string | null; description?: string | null; rows: Record<string, unknown>[] }, wbUserId: string): Promise<CreatedVersion> {
    const table = await this.tables.create(projectId, input.rows);
    const val = datasetVal(tableRefUri(projectId, table.digest), input.name, input.description);
    return this.objects.create({ projectId, objectId: makeObjectId(input.name, "Dataset"), val, wbUserId });
  }

  async readDataset(projectId: string, objectId: string, digest: string) {
    return datasetView(await this.readKind(projectId, objectId, digest, "Dataset"));
  }

  async listDatasets(projectId: string, page: Page) {
    return (await this.listKind(projectId, "Dataset", page)).map(datasetView);
  }

  async createScorer(projectId: string, input: { name: string; description?: string | null; opSourceCode: string }, wbUserId: string): Promise<CreatedVersion & { scorer: string }> {
    const scorerId = makeObjectId(input.name, "Scorer");
    const scoreOp = await this.createOp(projectId, { name: `${scorerId}_score`, sourceCode: input.opSourceCode }, wbUserId);
    const summarizeOp = await this.createOp(projectId, { name: `${scorerId}_summarize`, sourceCode: PLACEHOLDER_SCORER_SUMMARIZE_OP_SOURCE }, wbUserId);
    const val = scorerVal(input.name, input.description, opRef(projectId, scoreOp), opRef(projectId, summarizeOp));
    const created = await this.objects.create({ projectId, objectId: scorerId, val, wbUserId });
    return { ...created, scorer: objectRefUri(projectId, scorerId, created.digest) };
  }

  async readScorer(projectId: string, objectId: string, digest: string) {
    return scorerView(await this.readKind(projectId, objectId, digest, "Scorer"));
  }

  async listScorers(projectId: string, page: Page) {
    return (await this.listKind(projectId, "Scorer", page)).map(scorerView);
  }

  async createEvaluation(
    projectId: string,
    input: {
      name: string;
      description?: string | null;
      dataset: string;
      scorers?: string[] | null;
      trials: number;
      evaluationName?: string | null;
      evalAttributes?: Record<string, unknown> | null;
    },
    wbUserId: string,
  ): Promise<CreatedVersion & { evaluationRef: string }> {
    for (const ref of [input.dataset, ...(input.scorers ?? [])]) parseWeaveRef(ref);
    const evaluationId = makeObjectId(input.name, "Evaluation");
    const evaluate = await this.createOp(projectId, { name: `${evaluationId}.evaluate`, sourceCode: PLACEHOLDER_EVALUATE_OP_SOURCE }, wbUserId);
    const predictAndScore = await this.createOp(projectId, { name: `${evaluationId}.predict_and_score`, sourceCode: PLACEHOLDER_PREDICT_AND_SCORE_OP_SOURCE }, wbUserId);
    const summarize = await this.createOp(projectId, { name: `${evaluationId}.summarize`, sourceCode: PLACEHOLDER_EVALUATION_SUMMARIZE_OP_SOURCE }, wbUserId);
    const val = evaluationVal({
      name: input.name,
      description: input.description,
      dataset: input.dataset,
      scorers: input.scorers,
      trials: input.trials,
      evaluationName: input.evaluationName,
      evalAttributes: input.evalAttributes,
      evaluateRef: opRef(projectId, evaluate),
      predictAndScoreRef: opRef(projectId, predictAndScore),
      summarizeRef: opRef(projectId, summarize),
    });
    const created = await this.objects.create({ projectId, objectId: evaluationId, val, wbUserId });
    return { ...created, evaluationRef: objectRefUri(projectId, evaluationId, created.digest) };
  }

  async readEvaluation(projectId: string, objectId: string, digest: string) {
    return evaluationView(await this.readKind(projectId, objectId, digest, "Evaluation"));
  }

  async listEvaluations(projectId: string, page: Page) {
    return (await this.listKind(projectId, "Evaluation", page)).map(evaluationView);
  }

  async createModel(projectId: string, input: { name: string; description?: string | null; sourceCode: string; attributes?: Record<string, unknown> | null }, wbUserId: string): Promise<CreatedVersion & { modelRef: string }> {
    const fileDigest = (await this.files.create(projectId, Buffer.from(input.sourceCode, "utf8"))).digest;
    const objectId = makeObjectId(input.name, "Model");
    const created = await this.objects.create({ projectId, objectId, val: modelVal(input.name, input.description, fileDigest, input.attributes), wbUserId });
    return { ...created, modelRef: objectRefUri(projectId, objectId, created.digest) };
  }

  async readModel(projectId: string, objectId: string, digest: string) {
    const version = await this.readKind(projectId, objectId, digest, "Model");
    return { ...modelView(version), sourceCode: await this.sourceOf(projectId, version.val) };
  }

  async listModels(projectId: string, page: Page) {
    const versions = await this.listKind(projectId, "Model", page);
    return Promise.all(versions.map(async (version) => ({ ...modelView(version), sourceCode: await this.sourceOf(projectId, version.val) })));
  }

  /** Deletes versions of any of these resources (all versions when `digests` is empty). */
  async delete(projectId: string, objectId: string, digests: string[] | undefined): Promise<number> {
    return (await this.objects.delete(projectId, objectId, digests)).numDeleted;
  }

  private async readKind(projectId: string, objectId: string, digest: string, kind: Kind): Promise<ObjectVersion> {
    const version = await this.objects.read(projectId, objectId, digest);
    const matches = kind === "op" ? version.kind === "op" : version.baseObjectClass === kind && isJsonObject(version.val);
    if (!matches) throw new TraceNotFound(`${kind === "op" ? "Op" : kind} ${objectId}:${digest} not found`);
    return version;
  }

  private listKind(projectId: string, kind: Exclude<Kind, "op">, page: Page): Promise<ObjectVersion[]> {
    return this.objects.query(projectId, { baseObjectClasses: [kind], isOp: false, ...page });
  }

  /** The text of the value's `obj.py` file; "" when it has none or it cannot be read. */
  private async sourceOf(projectId: string, val: unknown): Promise<string> {
    const files = isJsonObject(val) && isJsonObject(val.files) ? val.files : undefined;
    const digest = files?.[OP_SOURCE_FILE_NAME];
    if (typeof digest !== "string") return "";
    return (await this.files.readText(projectId, digest)) ?? "";
  }
}

function opRef(projectId: string, op: CreatedVersion): string {
  return objectRefUri(projectId, op.objectId, op.digest, "op");
}

function header(version: ObjectVersion): VersionHeader {
  return { objectId: version.objectId, digest: version.digest, versionIndex: version.versionIndex, createdAt: version.createdAt };
}

function fieldsOf(version: ObjectVersion): Record<string, unknown> {
  return isJsonObject(version.val) ? version.val : {};
}

function stringOr<T>(value: unknown, fallback: T): string | T {
  return typeof value === "string" ? value : fallback;
}

function datasetView(version: ObjectVersion) {
  const val = fieldsOf(version);
  return { ...header(version), name: stringOr(val.name, version.objectId), description: stringOr(val.description, null), rows: stringOr(val.rows, "") };
}

function scorerView(version: ObjectVersion) {
  const val = fieldsOf(version);
  return { ...header(version), name: stringOr(val.name, version.objectId), description: stringOr(val.description, null), scoreOp: stringOr(val.score, "") };
}

function evaluationView(version: ObjectVersion) {
  const val = fieldsOf(version);
  return {
    ...header(version),
    name: stringOr(val.name, version.objectId),
    description: stringOr(val.description, null),
    dataset: stringOr(val.dataset, ""),
    scorers: Array.isArray(val.scorers) ? val.scorers : [],
    trials: val.trials ?? 1,
    evaluationName: stringOr(val.evaluation_name, null),
    evaluateOp: stringOr(val.evaluate, null),
    predictAndScoreOp: stringOr(val.predict_and_score, null),
    summarizeOp: stringOr(val.summarize, null),
  };
}

function modelView(version: ObjectVersion) {
  const val = fieldsOf(version);
  const attributes = Object.fromEntries(Object.entries(val).filter(([key]) => !MODEL_SYSTEM_KEYS.has(key)));
  return {
    ...header(version),
    name: stringOr(val.name, version.objectId),
    description: stringOr(val.description, null),
    attributes: Object.keys(attributes).length > 0 ? attributes : null,
  };
}
