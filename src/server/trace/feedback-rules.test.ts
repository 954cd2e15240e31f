import { describe, expect, it } from "vitest";
import { prepareFeedback } from "./feedback-rules.js";
import type { RefReader } from "./ref-expansion.js";

const spec = "weave:///e/p/object/quality:v1";
/** The objects side's refs reader at this seam: one AnnotationSpec object. */
const reader: RefReader = {
  async readRefs(_projectId, refs) {
    return refs.map((ref) => (ref === spec ? { _class_name: "AnnotationSpec", name: "quality", field_schema: { type: "integer", minimum: 1, maximum: 5 } } : null));
  },
};
const annotation = (value: unknown, annotationRef = spec) => ({ project_id: "e/p", weave_ref: "weave:///e/p/call/c", feedback_type: "wandb.annotation.quality", annotation_ref: annotationRef, payload: { value } });

describe("annotation feedback", () => {
  it("checks values against the field schema of their AnnotationSpec", async () => {
    const row = await prepareFeedback(annotation(4), "user", { refReader: reader });
    expect(row).toMatchObject({ feedback_type: "wandb.annotation.quality", payload: { value: 4 }, wb_user_id: "user", annotation_ref: spec });
    await expect(prepareFeedback(annotation(9), "user", { refReader: reader })).rejects.toThrow(/does not match annotation spec/);
    await expect(prepareFeedback(annotation("4"), "user", { refReader: reader })).rejects.toThrow(/does not match annotation spec/);
    await expect(prepareFeedback(annotation(4, "weave:///e/p/object/quality:v9"), "user", { refReader: reader })).rejects.toThrow(/not found/);
    await expect(prepareFeedback(annotation(4, "weave:///other/p/object/quality:v1"), "user", { refReader: reader })).rejects.toThrow(/does not match project/);
  });

  it("checks queue ids when a queue lookup is wired", async () => {
    const queues = { queueExists: async (_project: string, id: string) => id === "q1" };
    const note = { project_id: "e/p", weave_ref: "weave:///e/p/call/c", feedback_type: "wandb.note.1", payload: { note: "hi" } };
    await expect(prepareFeedback({ ...note, queue_id: "q1" }, "user", { queues })).resolves.toMatchObject({ queue_id: "q1" });
    await expect(prepareFeedback({ ...note, queue_id: "q2" }, "user", { queues })).rejects.toThrow(/Queue q2 not found/);
  });
});
