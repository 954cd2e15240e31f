import { describe, expect, it } from "vitest";
import { formatArtifactUrl, parseArtifactUrl } from "./artifact-url.js";

describe("artifact URLs", () => {
  it.each([
    ["wandb-artifact:///team/proj/data:v3", { entity: "team", project: "proj", name: "data", version: 3 }],
    ["wandb-artifact://team/proj/data:v0", { entity: "team", project: "proj", name: "data", version: 0 }],
    ["artifact:///team/proj/my.data-1:latest", { entity: "team", project: "proj", name: "my.data-1", version: "latest" }],
    ["wandb-artifact:///team/proj/data", { entity: "team", project: "proj", name: "data", version: "latest" }],
  ])("parses %s", (url, expected) => {
    expect(parseArtifactUrl(url)).toEqual(expected);
  });

  it.each([
    ["s3://bucket/data", /expected an artifact URL/],
    ["wandb-artifact:///team/data:v1", /expected an artifact URL/],
    ["wandb-artifact:///team/proj/data:step2", /unknown artifact alias 'step2'/],
  ])("explains what is wrong with %s", (url, message) => {
    expect(parseArtifactUrl(url)).toMatch(message);
  });

  it("formats the canonical three-slash form", () => {
    expect(formatArtifactUrl({ entity: "e", project: "p", name: "n", version: 2 })).toBe("wandb-artifact:///e/p/n:v2");
  });
});
