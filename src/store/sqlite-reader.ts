import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { CompiledQuery, Kysely } from "kysely";

/**
 * The thread's code: one connection of its own to the same file, for reading only (`query_only`),
 * answering one statement at a time. Plain JavaScript, so it runs the same from the built code and
 * from the TypeScript sources. WAL mode lets it read beside the server's connection, which may be
 * writing meanwhile; it sees what was committed when its statement began.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("busy_timeout = 10000");
db.pragma("query_only = ON");
parentPort.on("message", ({ id, sql, parameters, textColumn }) => {
  try {
    if (!textColumn) return parentPort.postMessage({ id, rows: db.prepare(sql).all(parameters) });
    const values = db.prepare(sql).pluck().all(parameters).map(String);
    const offsets = new Float64Array(values.length + 1);
    for (let i = 0; i < values.length; i++) offsets[i + 1] = offsets[i] + Buffer.byteLength(values[i]);
    const bytes = Buffer.allocUnsafeSlow(offsets[values.length]);
    for (let i = 0; i < values.length; i++) bytes.write(values[i], offsets[i]);
    parentPort.postMessage({ id, column: { bytes, offsets } }, [bytes.buffer, offsets.buffer]);
  } catch (error) {
    parentPort.postMessage({ id, error: { message: error.message, code: error.code } });
  }
});`;

type Reply = { id: number; rows: Record<string, unknown>[] } | { id: number; column: { bytes: Uint8Array; offsets: Float64Array } } | { id: number; error: { message: string; code?: string } };

/** A list of strings read from a statement's first column. */
export interface TextList {
  readonly length: number;
  slice(start: number, end: number): string[];
}

/**
 * The strings of a text column as the reader thread sends them: one buffer of UTF-8 and their
 * offsets, both transferred, not copied. A list of 256,000 ids sent as strings (or rows) is
 * rebuilt on the receiving thread in one piece, 0.2–0.8 s of the event loop on a busy machine;
 * this decodes only the strings asked for, a page at a time.
 */
class EncodedTextList implements TextList {
  private readonly buffer: Buffer;
  constructor(
    bytes: Uint8Array,
    private readonly offsets: Float64Array,
  ) {
    this.buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get length(): number {
    return this.offsets.length - 1;
  }

  slice(start: number, end: number): string[] {
    const strings: string[] = [];
    for (let i = Math.max(0, start); i < Math.min(end, this.length); i++) strings.push(this.buffer.toString("utf8", this.offsets[i], this.offsets[i + 1]));
    return strings;
  }
}

/**
 * Runs read statements of a SQLite database on a thread of its own. better-sqlite3 answers on the
 * calling thread, so a statement that sorts a whole project (a calls query in another order over
 * 256,000 calls: seconds) would hold the event loop, and every other request, for that long. The
 * thread starts on first use and is unreferenced, so an idle reader never keeps the process alive.
 */
export class SqliteReader {
  private thread: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (answer: unknown) => void; reject: (error: Error) => void }>();

  constructor(private readonly file: string) {}

  /** The statement's rows, read on the reader's thread. */
  all<Row>(query: CompiledQuery<Row>): Promise<Row[]> {
    return this.ask(query, false) as Promise<Row[]>;
  }

  /** The statement's first column, as text, read on the reader's thread. */
  textColumn(query: CompiledQuery): Promise<TextList> {
    return this.ask(query, true) as Promise<TextList>;
  }

  private ask(query: CompiledQuery, textColumn: boolean): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const thread = this.start();
      thread.ref();
      thread.postMessage({ id, sql: query.sql, parameters: query.parameters, textColumn });
    });
  }

  async close(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    if (thread) await thread.terminate();
  }

  private start(): Worker {
    if (this.thread) return this.thread;
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    const thread = new Worker(THREAD_SOURCE, { eval: true, workerData: { file: this.file, driver } });
    thread.unref();
    thread.on("message", (reply: Reply) => {
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) thread.unref();
      if (!waiter) return;
      if ("rows" in reply) waiter.resolve(reply.rows);
      else if ("column" in reply) waiter.resolve(new EncodedTextList(reply.column.bytes, reply.column.offsets));
      else waiter.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    });
    const failAll = (error: Error) => {
      if (this.thread === thread) this.thread = undefined;
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
    };
    thread.on("error", failAll);
    thread.on("exit", (code) => failAll(new Error(`the SQLite reader thread exited with code ${code}`)));
    this.thread = thread;
    return thread;
  }
}

/**
 * Readers by query executor: copies of a Kysely instance made by `withTables` (as the trace store's)
 * share their executor, while a transaction or a copy with plugins has its own, and no reader.
 */
const readers = new WeakMap<object, SqliteReader>();

/** Gives a SQLite store's Kysely instance, and its copies by `withTables`, their off-loop reader (`readOffLoop`). */
export function attachSqliteReader(db: Kysely<any>, reader: SqliteReader): void {
  readers.set(db.getExecutor(), reader);
}

/**
 * Runs a read statement off the event loop where the database has a reader (a SQLite store's own
 * Kysely instance), and as usual otherwise: PostgreSQL answers on its own connection already, and
 * inside a transaction the statement must see the transaction's writes.
 */
export async function readOffLoop<Row>(db: Kysely<any>, query: CompiledQuery<Row>): Promise<Row[]> {
  const reader = readers.get(db.getExecutor());
  return reader ? await reader.all(query) : (await db.executeQuery(query)).rows;
}

/** `readOffLoop` for a statement's first column as text (ids, for instance), without rebuilding them all on the event loop. */
export async function readTextColumnOffLoop(db: Kysely<any>, query: CompiledQuery): Promise<TextList> {
  const reader = readers.get(db.getExecutor());
  if (reader) return await reader.textColumn(query);
  return (await db.executeQuery<Record<string, unknown>>(query)).rows.map((row) => String(Object.values(row)[0]));
}
