import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CheckpointTensors } from "../engine/checkpoint/tensors.js";
import { makeTinyModel } from "../engine/fixtures/tiny-model.js";
import { GgmlType } from "../engine/gguf/format.js";
import { readGguf } from "../engine/gguf/reader.js";
import { runCli } from "../testing/cli.js";
import { UsageError } from "./args.js";
import { modelsCommand } from "./models.js";
import { makeTempDir } from "../testing/stores.js";

const root = makeTempDir("flywheel-cli-models-");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const digest = (dir: string) => {
  const tensors = CheckpointTensors.open(dir);
  try {
    return tensors.digest();
  } finally {
    tensors.close();
  }
};

describe("flywheel models make-tiny", () => {
  it("writes the same model as the library call", async () => {
    const out = path.join(root, "cli");
    const res = await runCli(["models", "make-tiny", "--arch", "qwen3", "--out", out, "--seed", "4", "--dtype", "bf16", "--shards", "2", "--layers", "1"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`Wrote a qwen3 model (1 layers, hidden 64, vocab 576, bf16) to ${out}`);
    const direct = path.join(root, "direct");
    makeTinyModel(direct, { architecture: "qwen3", seed: 4, dtype: "bf16", shards: 2, numLayers: 1 });
    expect(digest(out)).toBe(digest(direct));
    expect(fs.readFileSync(path.join(out, "tokenizer.json"), "utf8")).toBe(fs.readFileSync(path.join(direct, "tokenizer.json"), "utf8"));
  });

  it("exits 2 with a message on a bad command line", async () => {
    const res = await runCli(["models", "make-tiny", "--arch", "gpt2", "--out", root]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^flywheel: models make-tiny needs --arch llama\|qwen2\|qwen3/);
  });

  it("rejects every malformed option as a usage error", async () => {
    const cases: [string[], RegExp][] = [
      [[], /flywheel models make-tiny --arch/],
      [["make-tiny", "--out", root], /needs --arch llama\|qwen2\|qwen3/],
      [["make-tiny", "--arch", "llama"], /needs --out DIR/],
      [["make-tiny", "--arch", "llama", "--out", root, "--dtype", "f8"], /--dtype must be f32, f16 or bf16/],
      [["make-tiny", "--arch", "llama", "--out", root, "--hidden", "0"], /--hidden must be an integer ≥ 1/],
      [["make-tiny", "--arch", "llama", "--out", root, "--seed=1.5"], /--seed must be an integer ≥ 0/],
      [["make-tiny", "--arch", "llama", "--out", root, "--tie-embeddings", "maybe"], /--tie-embeddings must be true or false/],
      [["make-tiny", "--arch", "llama", "--out", path.join(root, "odd"), "--hidden", "30"], /head_dim must be an even integer/],
      [["make-tiny", "--arch", "llama", "--out", root, "--bogus", "1"], /Unknown option '--bogus'/],
    ];
    for (const [args, message] of cases) {
      await expect(modelsCommand(args), args.join(" ")).rejects.toThrow(message);
      await expect(modelsCommand(args)).rejects.toBeInstanceOf(UsageError);
    }
  });
});

describe("flywheel models build-tiny-chat", () => {
  it("runs the committed recipe with fewer steps, and writes the model card", async () => {
    const out = path.join(root, "tiny-chat");
    const res = await runCli(["models", "build-tiny-chat", "--out", out, "--steps", "2", "--examples-per-step", "6", "--eval-examples", "1", "--threads", "1"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/step 2\/2 {2}loss \d/);
    expect(res.stdout).toMatch(/Wrote flywheel\/tiny-chat \(\d+\.\d+M parameters\) to /);
    const report = JSON.parse(fs.readFileSync(path.join(out, "eval.json"), "utf8"));
    expect(report).toMatchObject({ model: "flywheel/tiny-chat", command: `flywheel models build-tiny-chat --out ${out} --steps 2 --examples-per-step 6 --eval-examples 1 --threads 1`, trainExamples: 12 });
    expect(report.recipe.schedule).toMatchObject({ steps: 2, examplesPerStep: 6, warmupSteps: 1 });
    expect(Object.values(report.heldOut).map((task) => (task as { total: number }).total)).toEqual([1, 1, 1, 1, 1, 1]);
    const card = fs.readFileSync(path.join(out, "README.md"), "utf8");
    expect(card).toContain("# flywheel/tiny-chat");
    expect(card).toContain("| arithmetic |");
  }, 180_000);

  it("rejects malformed options as usage errors", async () => {
    for (const [args, message] of [
      [["build-tiny-chat", "--steps", "0"], /--steps must be an integer ≥ 1/],
      [["build-tiny-chat", "--threads", "two"], /--threads must be an integer ≥ 1/],
      [["build-tiny-chat", "--arch", "llama"], /Unknown option '--arch'/],
    ] as const) {
      await expect(modelsCommand([...args]), args.join(" ")).rejects.toThrow(message);
    }
  });
});

describe("flywheel models export-gguf", () => {
  it("writes a GGUF file of the checkpoint", async () => {
    const model = path.join(root, "to-export");
    makeTinyModel(model, { architecture: "qwen2", dtype: "bf16", numLayers: 1 });
    const out = path.join(root, "model.gguf");
    const res = await runCli(["models", "export-gguf", "--model", model, "--out", out, "--dtype", "f16"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`Wrote qwen2 in f16 \\(\\d+ tensors, \\d+ padding tokens for embedding rows the tokenizer does not define\\) to ${out}`));
    const gguf = readGguf(out);
    expect(gguf.metadata.get("general.file_type")?.value).toBe(1);
    expect(gguf.tensors.find((tensor) => tensor.name === "blk.0.attn_q.weight")?.type).toBe(GgmlType.F16);
  });

  it("rejects bad options and checkpoints as usage errors, leaving no file behind", async () => {
    const model = path.join(root, "broken");
    makeTinyModel(model, { architecture: "llama", numLayers: 1 });
    fs.rmSync(path.join(model, "model.safetensors"));
    const out = path.join(root, "broken.gguf");
    const cases: [string[], RegExp][] = [
      [["export-gguf", "--out", out], /needs --model DIR/],
      [["export-gguf", "--model", model], /needs --out FILE/],
      [["export-gguf", "--model", model, "--out", out, "--dtype", "q4"], /--dtype must be f32, f16 or bf16, got 'q4'/],
      [["export-gguf", "--model", root, "--out", out], /is not a checkpoint directory/],
      [["export-gguf", "--model", model, "--out", out], /model.safetensors: is missing/],
    ];
    for (const [args, message] of cases) {
      await expect(modelsCommand(args), args.join(" ")).rejects.toThrow(message);
      await expect(modelsCommand(args)).rejects.toBeInstanceOf(UsageError);
    }
    expect(fs.existsSync(out)).toBe(false);
  });
});
