import { describe, expect, it } from "vitest";
import { parseModelName } from "./model-names.js";

const served = new Set(["org/base", "odd@7"]);
const parse = (name: string) => parseModelName(name, (id) => served.has(id));

describe("model names", () => {
  it("parses served base model ids", () => {
    expect(parse("org/base")).toEqual({ kind: "base", id: "org/base" });
    expect(parse("odd@7")).toEqual({ kind: "base", id: "odd@7" });
  });

  it("parses artifact names with two or three slashes, both schemes, and every alias", () => {
    const latest = { kind: "artifact", entity: "ent", project: "proj", name: "agent-001", step: "latest" };
    expect(parse("wandb-artifact:///ent/proj/agent-001")).toEqual(latest);
    expect(parse("wandb-artifact://ent/proj/agent-001")).toEqual(latest);
    expect(parse("artifact:///ent/proj/agent-001:latest")).toEqual(latest);
    expect(parse("wandb-artifact:///ent/proj/agent-001:step25")).toEqual({ ...latest, step: 25 });
    expect(parse("artifact://ent/proj/agent-001:step0")).toEqual({ ...latest, step: 0 });
  });

  it("parses ART's local name@step form", () => {
    expect(parse("agent-001@3")).toEqual({ kind: "local", name: "agent-001", step: 3 });
  });

  it("rejects malformed names", () => {
    for (const name of [
      "wandb-artifact:///ent/proj",
      "wandb-artifact:///ent/proj/name/extra",
      "wandb-artifact:///ent/proj/name:v3",
      "wandb-artifact:///ent/proj/name:step",
      "wandb-artifact:////ent/proj/name",
      "artifact:ent/proj/name",
      "unknown/model",
      "name@",
      "name@x",
      "@3",
    ]) {
      expect(parse(name), name).toBeUndefined();
    }
    expect(parse("wandb-artifact:///e/p/n:step99999999999999999999")).toMatchObject({ step: -1 });
  });
});
