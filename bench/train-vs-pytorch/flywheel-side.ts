/**
 * The Flywheel side of `npm run bench:train` (bench/train-vs-pytorch.ts), in a process of its own so
 * FLYWHEEL_THREADS (and, for the bench's --bf16 runs, FLYWHEEL_FORWARD_PRECISION and
 * FLYWHEEL_BACKWARD_PRECISION) applies at load:
 * loads the checkpoint on the kernels the server selects (`selectKernels`: native when built,
 * FLYWHEEL_KERNELS overrides),
 * then runs the spec's measures (cases.ts `RowsSpec`) exactly as bench/train_peft.py does on the
 * PyTorch side, printing one JSON line per step and a summary line. --measures keeps only the
 * spec's measures it names.
 *
 *   npx tsx bench/train-vs-pytorch/flywheel-side.ts --model DIR --rows ROWS.json [--measures step,score]
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { createLoraAdapter } from "../../src/engine/lora/init.js";
import { selectKernels } from "../../src/engine/kernels/select.js";
import { loadModel } from "../../src/engine/model/load.js";
import { IGNORE, type SftRow } from "../../src/engine/train/sft-tokenize.js";
import { packSftBatch } from "../../src/engine/train/sft-packing.js";
import { SFT_PACKED_TOKENS, Trainer } from "../../src/engine/train/trainer.js";
import type { RowsSpec } from "./cases.js";

const { values } = parseArgs({ options: { model: { type: "string" }, rows: { type: "string" }, measures: { type: "string" } } });
if (!values.model || !values.rows) throw new Error("usage: flywheel-side.ts --model DIR --rows ROWS.json [--measures LIST]");
const spec = JSON.parse(fs.readFileSync(values.rows, "utf8")) as RowsSpec;
const named = values.measures?.split(",");
const measures = named ? spec.measures.filter((measure) => named.includes(measure)) : spec.measures;
const emit = (record: Record<string, unknown>) => console.log(JSON.stringify(record));

const kernels = selectKernels();
const model = loadModel(values.model, { kernels });
const target = spec.mode === "full" ? "full" : createLoraAdapter(model.config, { seed: 1, rank: spec.lora.rank, alpha: spec.lora.alpha, targetModules: spec.lora.targetModules });
const trainer = new Trainer(model.transformer, target);
const completion = spec.rows[0]!.length - spec.promptLength;
const rows: SftRow[] = spec.rows.map((tokens) => {
  const ids = Int32Array.from(tokens);
  return { tokens: ids, labels: ids.map((id, p) => (p >= spec.promptLength ? id : IGNORE)), numTrainableTokens: completion };
});

const runs = {
  step: () => trainer.sftStep({ rows, learningRate: spec.learningRate }).loss,
  // The rows in one forward, as a step packs them (PyTorch's side scores them as one batch).
  score: () => {
    let sum = 0;
    for (const packed of packSftBatch(rows, SFT_PACKED_TOKENS)) {
      const { logprobs } = trainer.score(packed);
      for (let p = 0; p < packed.sequence.length; p++) if (packed.mask[p]) sum -= logprobs[p]!;
    }
    return sum / (rows.length * completion);
  },
};

for (const measure of measures) {
  for (let index = 0; index < spec.warmup + spec.steps; index++) {
    const [started, cpuStarted] = [performance.now(), process.cpuUsage()];
    const loss = runs[measure]();
    const cpu = process.cpuUsage(cpuStarted);
    emit({ measure, index, warmup: index < spec.warmup, seconds: (performance.now() - started) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6, loss });
  }
}
const threads = "threads" in kernels ? ` (${(kernels as { threads: number }).threads} threads)` : " (single-threaded)";
// What the kernels run (not what the environment asked for: a CPU without AVX-512 BF16 stays f32),
// so the report tells the bf16 runs apart.
const bf16Products = [kernels.forwardPrecision === "bf16" ? "forward" : "", kernels.backwardPrecision === "bf16" ? "backward" : ""].filter(Boolean);
const precision = bf16Products.length > 0 ? `, bf16 ${bf16Products.join(" and ")} products` : "";
emit({ done: true, backend: `flywheel ${kernels.name} kernels${threads}${precision}` });
