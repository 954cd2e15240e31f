import { TraceBadRequest } from "./errors.js";
import { PyFloat, PyInt } from "../../python-format.js";

/** A JSON object (not an array, null or a wrapped number). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof PyFloat) && !(value instanceof PyInt);
}

export interface ObjectClasses {
  baseObjectClass: string | null;
  leafObjectClass: string | null;
}

const BASE_OBJECT_CLASS_NAMES = new Set(["BaseObject", "Object"]);

/**
 * Weave object classes (`docs/api/trace.md#object-classes`): a dict whose `_bases` ends with
 * `[..., "Object" | "BaseObject", "BaseModel"]` is a Weave object; its leaf class is `_class_name`
 * and its base class the one just above Object (or the leaf itself when there is none).
 */
export function objectClassesOf(val: unknown): ObjectClasses | null {
  if (!isJsonObject(val) || !Array.isArray(val._bases)) return null;
  const bases = val._bases;
  if (bases.length < 2 || bases[bases.length - 1] !== "BaseModel" || !BASE_OBJECT_CLASS_NAMES.has(bases[bases.length - 2] as string)) return null;
  const leaf = typeof val._class_name === "string" ? val._class_name : null;
  if (leaf === null) return null;
  const above = bases.length > 2 ? bases[bases.length - 3] : leaf;
  return { baseObjectClass: typeof above === "string" ? above : null, leafObjectClass: leaf };
}

/**
 * Applies the request's `builtin_object_class` rule: a value that carries class information must
 * name the same class. Server-side registry classes (which re-dump a bare value into a class) are
 * not reproduced, so naming one for a bare value is a 400.
 */
export function resolveObjectClasses(val: unknown, builtinObjectClass: string | null | undefined): ObjectClasses {
  const classes = objectClassesOf(val);
  if (builtinObjectClass === null || builtinObjectClass === undefined) return classes ?? { baseObjectClass: null, leafObjectClass: null };
  if (!isJsonObject(val)) throw new TraceBadRequest("object_class cannot be provided for non-dict objects");
  if (!classes) throw new TraceBadRequest(`Unknown object class: ${builtinObjectClass}`);
  if (classes.leafObjectClass !== builtinObjectClass) {
    throw new TraceBadRequest(`object_class must match val's defined object class: ${classes.leafObjectClass} != ${builtinObjectClass}`);
  }
  return classes;
}

/** `op` when the value is a serialized op (`_type: "Op"`, or a CustomWeaveType whose weave_type is Op). */
export function objectKindOf(val: unknown): "op" | "object" {
  if (!isJsonObject(val)) return "object";
  let type: unknown = val._type;
  if ("_type" in val && "weave_type" in val) type = isJsonObject(val.weave_type) ? val.weave_type.type : undefined;
  return type === "Op" ? "op" : "object";
}

/** Rejects CustomWeaveType `files` keys that are absolute or climb out with `..` (after normalisation). */
export function validateCustomTypeFileKeys(val: unknown): void {
  if (Array.isArray(val)) {
    for (const item of val) validateCustomTypeFileKeys(item);
    return;
  }
  if (!isJsonObject(val)) return;
  if (val._type === "CustomWeaveType" && isJsonObject(val.files)) {
    for (const key of Object.keys(val.files)) {
      if (key.startsWith("/") || normalizedPathParts(key).includes("..")) throw new TraceBadRequest(`Invalid file path key: '${key}'`);
    }
  }
  for (const child of Object.values(val)) validateCustomTypeFileKeys(child);
}

/** POSIX `normpath` of a relative path, as parts: `a/../b` is `[b]`, `a/../../b` is `[.., b]`. */
function normalizedPathParts(path: string): string[] {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
    else parts.push(part);
  }
  return parts;
}
