import { TraceBadRequest, TraceInvalidField } from "../store/trace/errors.js";

/**
 * Name rules of Weave's validation module (`docs/api/trace.md#versioning`, `docs/api/trace.md#objects`).
 * Python's `\w` is Unicode aware: letters, digits and underscore of any script.
 */

const OBJECT_ID_INVALID_CHAR = /[^\p{L}\p{N}_.-]/gu;
const MAX_OBJECT_ID_LENGTH = 128;

/** Object ids are 1–128 word characters, dots and dashes; anything else is InvalidFieldError (403). */
export function validateObjectId(objectId: string): void {
  const invalid = objectId.match(OBJECT_ID_INVALID_CHAR);
  if (invalid) {
    const chars = [...new Set(invalid)].map((c) => `'${c}'`).join(", ");
    throw new TraceInvalidField(`Invalid object name: ${objectId}. Contains invalid characters: [${chars}].`);
  }
  if (!objectId) throw new TraceInvalidField("Object name cannot be empty");
  if ([...objectId].length > MAX_OBJECT_ID_LENGTH) throw new TraceInvalidField(`Object name must be at most ${MAX_OBJECT_ID_LENGTH} characters`);
}

const MAX_TAG_LENGTH = 256;
const TAG_PATTERN = /^[-\p{L}\p{N}_]+( [-\p{L}\p{N}_]+)*$/u;

/** Tags: letters, digits, `_` and `-`, words separated by single spaces, at most 256 characters. */
export function validateTagName(name: string): void {
  if (!name) throw new TraceBadRequest("tag name must not be empty");
  if ([...name].length > MAX_TAG_LENGTH) throw new TraceBadRequest(`tag name must be at most ${MAX_TAG_LENGTH} characters`);
  if (!TAG_PATTERN.test(name)) {
    throw new TraceBadRequest(`tag name '${name}' is invalid: only alphanumeric characters, hyphens, underscores, and single spaces between words are allowed`);
  }
}

const MAX_ALIAS_LENGTH = 128;

/** Aliases: any text without `/` or `:`, not blank, at most 128 characters; `latest` and `v<N>` are reserved. */
export function validateAliasName(name: string): void {
  if (!name) throw new TraceBadRequest("alias name must not be empty");
  if (!name.trim()) throw new TraceBadRequest("alias name must not be whitespace-only");
  if ([...name].length > MAX_ALIAS_LENGTH) throw new TraceBadRequest(`alias name must be at most ${MAX_ALIAS_LENGTH} characters`);
  for (const ch of ["/", ":"]) {
    if (name.includes(ch)) throw new TraceBadRequest(`alias name cannot contain character '${ch}'`);
  }
  if (/^v[0-9]+$/.test(name)) throw new TraceBadRequest(`alias name '${name}' is reserved (matches version pattern v<number>)`);
  if (name === "latest") throw new TraceBadRequest(`alias name '${name}' is reserved`);
}
