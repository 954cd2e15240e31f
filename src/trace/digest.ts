import { createHash } from "node:crypto";
import { pythonJsonDumps } from "../python-format.js";
import { type ObjectClasses, objectKindOf, resolveObjectClasses, validateCustomTypeFileKeys } from "../store/trace/object-class.js";

/**
 * Weave's digests (`docs/api/trace.md#digests`, `weave/shared/digest.py`), byte-exact so that refs the SDKs
 * compute client-side (op source files, images) match the server's.
 */

/** sha256 → base64url → `-`→`X`, `_`→`Y`, no padding: 43 characters of [A-Za-z0-9]. */
export function bytesDigest(content: Uint8Array | string): string {
  const hash = createHash("sha256").update(content).digest("base64url");
  return hash.replaceAll("-", "X").replaceAll("_", "Y");
}

export interface ObjectDigest extends ObjectClasses {
  digest: string;
  /** The exact text hashed: `json.dumps(val, sort_keys=True)`. */
  canonicalJson: string;
  kind: "op" | "object";
}

/** The digest of an object version, after the builtin-class rule and file-key safety checks. */
export function objectDigestOf(val: unknown, builtinObjectClass?: string | null): ObjectDigest {
  validateCustomTypeFileKeys(val);
  const classes = resolveObjectClasses(val, builtinObjectClass);
  const canonicalJson = pythonJsonDumps(val, { sortKeys: true });
  return { digest: bytesDigest(canonicalJson), canonicalJson, kind: objectKindOf(val), ...classes };
}

/** A table row's digest: the object digest of the row dict, without class processing. */
export function rowDigestOf(row: Record<string, unknown>): string {
  return bytesDigest(pythonJsonDumps(row, { sortKeys: true }));
}

/** A table's digest: sha256 hex over the concatenated row digests, in table order. */
export function tableDigestOf(rowDigests: readonly string[]): string {
  const hash = createHash("sha256");
  for (const digest of rowDigests) hash.update(digest);
  return hash.digest("hex");
}

/** `digest_is_content_hash`: a Weave digest (43 alphanumerics) or a sha256 hex digest. */
export function isContentDigest(value: string): boolean {
  return /^[A-Za-z0-9]{43}$/.test(value) || /^[0-9a-fA-F]{64}$/.test(value);
}

/** The N of a `v<N>` version selector, or undefined when the string is not one. */
export function versionIndexOf(value: string): number | undefined {
  const match = /^v([0-9]+)$/.exec(value);
  return match ? Number(match[1]) : undefined;
}
