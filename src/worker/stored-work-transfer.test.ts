import { describe, expect, it } from "vitest";
import type { StoredJobWork } from "./job-input.js";
import { packStoredWork, unpackStoredWork } from "./stored-work-transfer.js";

const works: StoredJobWork[] = [
  { kind: "rl", input: '{"trajectory_groups": [{"content": "日本 🙂 é \\u0000"}]}', config: "{}" },
  { kind: "sft", config: '{"batch_size": 2}', data: { text: '{"messages": []}\n{"messages": ["ü"]}\n', fileName: "train.jsonl", metadataText: '{"n": 2}' } },
  { kind: "sft", web: { training_data_url: "https://example.com/d.jsonl", web: true, config_request: null, experimental_config: null }, data: { text: "", fileName: "d.jsonl" } },
];

describe("packStoredWork", () => {
  it.each(works.map((work) => [work.kind, work] as const))("gives back the same %s work, its large text as transferable bytes", (_kind, work) => {
    const { packed, transferList } = packStoredWork(work);
    expect(transferList).toEqual([packed.text.buffer]);
    expect(JSON.stringify(packed.work)).not.toContain("trajectory_groups");
    expect(unpackStoredWork(structuredClone(packed, { transfer: transferList }))).toEqual(work);
  });
});
