import fs from "node:fs";
import { CheckpointError } from "./errors.js";

export type JsonObject = Record<string, unknown>;

/** Reads a JSON object from `file`; undefined when it does not exist and `optional` is set. */
export function readJsonObject(file: string, options: { optional: true }): JsonObject | undefined;
export function readJsonObject(file: string, options?: { optional?: false }): JsonObject;
export function readJsonObject(file: string, options: { optional?: boolean } = {}): JsonObject | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      if (options.optional) return undefined;
      throw new CheckpointError(file, undefined, "is missing");
    }
    throw new CheckpointError(file, undefined, `cannot be read: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CheckpointError(file, undefined, `is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(value)) throw new CheckpointError(file, undefined, "must contain a JSON object");
  return value;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Typed access to the fields of one JSON object read from `file`, with errors that name the file
 * and the field. `prefix` is the object's own path inside the file (for nested objects).
 */
export class JsonFields {
  constructor(
    readonly file: string,
    readonly object: JsonObject,
    readonly prefix = "",
  ) {}

  path(key: string): string {
    return this.prefix ? `${this.prefix}.${key}` : key;
  }

  fail(key: string, detail: string): never {
    throw new CheckpointError(this.file, this.path(key), detail);
  }

  /** The raw value; undefined and null both count as absent. */
  raw(key: string): unknown {
    const value = this.object[key];
    return value === null ? undefined : value;
  }

  has(key: string): boolean {
    return this.raw(key) !== undefined;
  }

  requiredInt(key: string, min = 1): number {
    const value = this.optionalInt(key, min);
    if (value === undefined) this.fail(key, "is missing");
    return value;
  }

  optionalInt(key: string, min = 0): number | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value)) this.fail(key, `must be an integer, got ${describe(value)}`);
    if (value < min) this.fail(key, `must be at least ${min}, got ${value}`);
    return value;
  }

  requiredNumber(key: string, check?: (value: number) => string | undefined): number {
    const value = this.optionalNumber(key, check);
    if (value === undefined) this.fail(key, "is missing");
    return value;
  }

  /** A finite number; `check` returns a complaint ("must be > 0") or undefined. */
  optionalNumber(key: string, check?: (value: number) => string | undefined): number | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value)) this.fail(key, `must be a number, got ${describe(value)}`);
    const complaint = check?.(value);
    if (complaint) this.fail(key, `${complaint}, got ${value}`);
    return value;
  }

  optionalBoolean(key: string): boolean | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== "boolean") this.fail(key, `must be true or false, got ${describe(value)}`);
    return value;
  }

  optionalString(key: string): string | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value !== "string") this.fail(key, `must be a string, got ${describe(value)}`);
    return value;
  }

  optionalObject(key: string): JsonFields | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (!isObject(value)) this.fail(key, `must be an object, got ${describe(value)}`);
    return new JsonFields(this.file, value, this.path(key));
  }

  /** An integer or a list of integers (e.g. `eos_token_id`), always returned as a list. */
  intList(key: string): number[] {
    const value = this.raw(key);
    if (value === undefined) return [];
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) {
      if (typeof item !== "number" || !Number.isInteger(item) || item < 0) this.fail(key, `must be a token id or a list of token ids, got ${describe(value)}`);
    }
    return list as number[];
  }
}

export function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  return String(value);
}
