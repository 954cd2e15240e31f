import { describe, expect, it } from "vitest";
import { TraceBadRequest, TraceInvalidField } from "../store/trace/errors.js";
import { validateAliasName, validateObjectId, validateTagName } from "./validation.js";

describe("name rules", () => {
  it.each(["reviewed", "staging", "v0", "latest", "two words", "dash-and_under", "ünïcode", "a".repeat(256)])("accepts tag %j", (tag) => {
    expect(() => validateTagName(tag)).not.toThrow();
  });

  it.each(["my.tag", "a+b", " leading", "trailing ", "two  spaces", "", "a".repeat(257), "new\nline"])("rejects tag %j", (tag) => {
    expect(() => validateTagName(tag)).toThrow(TraceBadRequest);
  });

  it.each(["my-deploy.v2", "has spaces", "prod", "v1-candidate", "é"])("accepts alias %j", (alias) => {
    expect(() => validateAliasName(alias)).not.toThrow();
  });

  it.each(["latest", "v0", "v123", "path/slash", "has:colon", "", "   ", "a".repeat(129)])("rejects alias %j", (alias) => {
    expect(() => validateAliasName(alias)).toThrow(TraceBadRequest);
  });

  it("limits object ids to word characters, dots and dashes (403)", () => {
    for (const ok of ["my_obj", "Dataset.v2-final", "données", "a".repeat(128)]) expect(() => validateObjectId(ok)).not.toThrow();
    for (const bad of ["has space", "a/b", "a:b", "", "a".repeat(129)]) expect(() => validateObjectId(bad)).toThrow(TraceInvalidField);
    expect(() => validateObjectId("a b")).toThrow(/invalid characters: \[' '\]/);
  });
});
