/**
 * Training benchmark: Flywheel's trainer beside Hugging Face transformers + PEFT (PyTorch on the
 * CPU), in one run, on the same checkpoint (written by makeTinyModel, the code behind
 * `flywheel models make-tiny`) and the same token rows, at the same thread counts (Flywheel:
 * FLYWHEEL_THREADS, i.e. the native pool's threads; PyTorch: torch.set_num_threads). Run with
 * `npm run bench:train [-- options]`:
 *
 *   --threads N[,M]        thread counts, one group of runs per count (default 1,2; --quick: 1)
 *   --cases LIST           tiny-chat, qwen2-4m, qwen2.5-0.5b (default all; see train-vs-pytorch/cases.ts)
 *   --skip-large           leave out qwen2.5-0.5b (Qwen2.5-0.5B's shapes: a 2 GB checkpoint, slow steps)
 *   --quick                fewer steps and shorter rows, one thread count, no large case unless named
 *   --flywheel-timeout S   stop a Flywheel run after S seconds and report from the steps it finished (default 900)
 *   --sides LIST           pytorch, flywheel (default both; one alone, e.g. to add a thread count to an earlier run)
 *   --rounds N             runs of each side, taken in turn (default 3, 1 for the large case and --quick)
 *   --bf16                 also time each side's bf16 mode, in the same rounds right after its f32 runs: PyTorch
 *                          with the forward under torch.autocast("cpu", bfloat16) (train_peft.py --autocast bf16;
 *                          f32 loss), and Flywheel with FLYWHEEL_FORWARD_PRECISION=bf16 and
 *                          FLYWHEEL_BACKWARD_PRECISION=bf16 (bf16 operands in every weight product, forward and
 *                          backward, f32 accumulation); adds their tokens/s, ratios and first and last losses
 *                          as extra columns
 *
 * Each side loads the model on its own kernels (Flywheel: the backend training selects, printed
 * with the results), runs warm-up steps, then timed ones. The sides take turns, a process per run
 * (PyTorch, Flywheel, PyTorch, …): a shared machine's speed drifts by a third from one minute to
 * the next, and turns give both sides the same drift. Tokens/s is the rows' tokens over the
 * median step time of all of a side's timed steps, and tokens per CPU-second the same over the median CPU time of a step (what a
 * step costs when the machine is shared; threads that spin while waiting count too). Both print the loss of every step, so the first losses show that they
 * computed the same thing (with --bf16 the last losses too, so the bf16 runs show they train the
 * same way). The f32 Flywheel runs leave both precision variables unset, whatever the shell
 * exports. The Python environment (scripts/python/env.mjs) and the checkpoints are made on first
 * use under bench/.cache (git-ignored). Not a test: numbers depend on the machine and its load.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { makeTinyModel } from "../src/engine/fixtures/tiny-model.js";
import { SeededRandom } from "../src/engine/fixtures/random.js";
import { type BenchCase, CASES, LORA, type RowsSpec } from "./train-vs-pytorch/cases.js";
import { describeMachine } from "./machine.js";

const cacheDir = path.join(import.meta.dirname, ".cache", "train");
const { values } = parseArgs({
  options: {
    threads: { type: "string" },
    cases: { type: "string" },
    "skip-large": { type: "boolean", default: false },
    quick: { type: "boolean", default: false },
    "flywheel-timeout": { type: "string", default: "900" },
    sides: { type: "string", default: "pytorch,flywheel" },
    rounds: { type: "string" },
    bf16: { type: "boolean", default: false },
  },
});
const quick = values.quick;
const threadCounts = (values.threads ?? (quick ? "1" : "1,2")).split(",").map((value) => {
  if (!/^[1-9]\d*$/.test(value)) throw new Error(`--threads takes positive integers, got ${value}`);
  return Number(value);
});
const named = values.cases?.split(",").map((name) => name.trim());
for (const name of named ?? []) if (!CASES.some((c) => c.name === name)) throw new Error(`unknown case ${name}; known: ${CASES.map((c) => c.name).join(", ")}`);
const cases = CASES.filter((c) => (named ? named.includes(c.name) : !(c.large && (values["skip-large"] || quick))));
const flywheelTimeout = Number(values["flywheel-timeout"]);
const sides = new Set(values.sides.split(","));
for (const side of sides) if (side !== "pytorch" && side !== "flywheel") throw new Error(`--sides takes pytorch and/or flywheel, got ${side}`);
if (values.rounds !== undefined && !/^[1-9]\d*$/.test(values.rounds)) throw new Error(`--rounds takes a positive integer, got ${values.rounds}`);
const roundsOf = (benchCase: BenchCase) => (values.rounds ? Number(values.rounds) : quick || benchCase.large ? 1 : 3);
const notRun: SideResult = { backend: "", steps: [], stopped: "not run" };
const log = (line: string) => console.error(`[bench:train] ${line}`);

interface StepRecord {
  measure: string;
  index: number;
  warmup: boolean;
  seconds: number;
  cpuSeconds: number;
  loss: number;
}

interface SideResult {
  backend: string;
  steps: StepRecord[];
  /** Why the run ended early (a timeout, a failure), if it did. */
  stopped?: string;
}

/** The steps of two runs of one side, as one result (the first run's backend, the first early stop). */
function merged(earlier: SideResult, later: SideResult): SideResult {
  if (earlier === notRun) return later;
  return { backend: earlier.backend || later.backend, steps: [...earlier.steps, ...later.steps], stopped: earlier.stopped ?? later.stopped };
}

/** Runs one side as a child process, collecting its JSON lines; on timeout keeps what it finished. */
function runSide(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutSeconds: number): Promise<SideResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    const result: SideResult = { backend: "", steps: [] };
    let buffered = "";
    let errors = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (!line.startsWith("{")) continue;
        const record = JSON.parse(line) as Partial<StepRecord> & { done?: boolean; backend?: string };
        if (record.done) result.backend = record.backend ?? "";
        else result.steps.push(record as StepRecord);
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (errors = (errors + chunk).slice(-4000)));
    const timer = setTimeout(() => {
      result.stopped = `stopped after ${timeoutSeconds} s`;
      child.kill("SIGTERM");
    }, timeoutSeconds * 1000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0 && !result.stopped) result.stopped = `exit ${code}: ${errors.trim().split("\n").slice(-5).join(" | ")}`;
      resolve(result);
    });
  });
}

/** The case's checkpoint, written once into bench/.cache/train (keyed by its options). */
function ensureCheckpoint(benchCase: BenchCase): { dir: string; tokenizerSize: number } {
  const options = { ...benchCase.model, seed: 1, dtype: "f32" as const };
  const key = createHash("sha256").update(JSON.stringify(options)).digest("hex").slice(0, 12);
  const dir = path.join(cacheDir, `${benchCase.name}-${key}`);
  const done = path.join(dir, ".complete");
  if (!fs.existsSync(done)) {
    log(`writing the ${benchCase.name} checkpoint (make-tiny ${benchCase.makeTinyFlags}) to ${path.relative(process.cwd(), dir)}`);
    fs.rmSync(dir, { recursive: true, force: true });
    const model = makeTinyModel(dir, options);
    fs.writeFileSync(done, JSON.stringify({ tokenizerSize: model.tokenizerSize }));
  }
  return { dir, tokenizerSize: (JSON.parse(fs.readFileSync(done, "utf8")) as { tokenizerSize: number }).tokenizerSize };
}

function rowsSpec(benchCase: BenchCase, tokenizerSize: number): RowsSpec {
  const [count, length] = quick ? benchCase.rows.quick : benchCase.rows.full;
  const random = new SeededRandom(7);
  const rows = Array.from({ length: count }, () => Array.from({ length }, () => random.nextUint32() % tokenizerSize));
  return {
    rows,
    promptLength: length / 2,
    mode: benchCase.mode,
    measures: benchCase.measures,
    warmup: quick ? benchCase.warmup.quick : benchCase.warmup.full,
    steps: quick ? benchCase.steps.quick : benchCase.steps.full,
    learningRate: 1e-4,
    lora: LORA,
  };
}

/** Three significant figures at most, whole numbers from 100 up. */
function rounded(value: number): string {
  return value >= 100 ? value.toFixed(0) : value.toPrecision(value >= 1 ? 3 : 2);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Wall and CPU seconds per step of a measure: medians of the timed steps, else the warm-up step's (flagged). */
function stepSeconds(side: SideResult, measure: string): { seconds: number; cpuSeconds: number; note: string } | undefined {
  const steps = side.steps.filter((step) => step.measure === measure);
  const timed = steps.filter((step) => !step.warmup);
  if (timed.length > 0) return { seconds: median(timed.map((step) => step.seconds)), cpuSeconds: median(timed.map((step) => step.cpuSeconds)), note: "" };
  if (steps.length > 0) return { seconds: steps[0]!.seconds, cpuSeconds: steps[0]!.cpuSeconds, note: "warm-up step only" };
  return undefined;
}

/** A kind of run: a side, f32 or (--bf16) its bf16 mode; each round runs them in this order, a process each. */
const VARIANTS = [
  { key: "pytorch", side: "pytorch", label: "PyTorch", bf16: false },
  { key: "flywheel", side: "flywheel", label: "Flywheel", bf16: false },
  { key: "pytorchAutocast", side: "pytorch", label: "PyTorch bf16 autocast", bf16: true },
  { key: "flywheelBf16", side: "flywheel", label: "Flywheel bf16", bf16: true },
] as const;
type Variant = (typeof VARIANTS)[number];
const shownVariants = VARIANTS.filter((variant) => values.bf16 || !variant.bf16);
const variants = shownVariants.filter((variant) => sides.has(variant.side));

type Row = { benchCase: BenchCase; measure: string; threads: number; tokens: number } & Record<Variant["key"], SideResult>;

/** One run of a variant as a child process, so the thread count and precisions apply when it loads the model. */
function runVariant(variant: Variant, dir: string, rowsFile: string, threads: number): Promise<SideResult> {
  if (variant.side === "pytorch") {
    const autocast = variant.bf16 ? ["--autocast", "bf16"] : [];
    return runSide(python, [path.join(import.meta.dirname, "train_peft.py"), "--model", dir, "--rows", rowsFile, "--threads", String(threads), ...autocast], process.env, 3600);
  }
  const flywheelArgs = ["--import", "tsx", path.join(import.meta.dirname, "train-vs-pytorch", "flywheel-side.ts"), "--model", dir, "--rows", rowsFile];
  // Undefined leaves a variable out of the child's environment: the f32 runs take the default.
  const precision = variant.bf16 ? "bf16" : undefined;
  const env = { ...process.env, FLYWHEEL_THREADS: String(threads), FLYWHEEL_FORWARD_PRECISION: precision, FLYWHEEL_BACKWARD_PRECISION: precision };
  return runSide(process.execPath, flywheelArgs, env, flywheelTimeout);
}

const python = projectPython();
const results: Row[] = [];
for (const benchCase of cases) {
  const { dir, tokenizerSize } = ensureCheckpoint(benchCase);
  const spec = rowsSpec(benchCase, tokenizerSize);
  const rowsFile = path.join(cacheDir, `${benchCase.name}-rows${quick ? "-quick" : ""}.json`);
  fs.writeFileSync(rowsFile, JSON.stringify(spec));
  const tokens = spec.rows.length * spec.rows[0]!.length;
  const rounds = roundsOf(benchCase);
  for (const threads of threadCounts) {
    const ran = { pytorch: notRun, flywheel: notRun, pytorchAutocast: notRun, flywheelBf16: notRun };
    for (let round = 1; round <= rounds; round++) {
      const of = rounds > 1 ? `, round ${round} of ${rounds}` : "";
      for (const variant of variants) {
        log(`${benchCase.name}, ${threads} thread(s): ${variant.label}${of}`);
        ran[variant.key] = merged(ran[variant.key], await runVariant(variant, dir, rowsFile, threads));
      }
    }
    for (const measure of spec.measures) results.push({ benchCase, measure, threads, tokens, ...ran });
    printRows(results.slice(-spec.measures.length));
  }
}

console.log(`\n## Training: Flywheel beside transformers + PEFT (${quick ? "quick" : "full"} run)\n`);
for (const benchCase of cases) console.log(`- ${benchCase.name}: ${benchCase.what}; make-tiny ${benchCase.makeTinyFlags}`);
if (values.bf16) console.log('- bf16: PyTorch autocast: the forward under torch.autocast("cpu", bfloat16), the loss in f32; Flywheel bf16: FLYWHEEL_FORWARD_PRECISION=bf16 and FLYWHEEL_BACKWARD_PRECISION=bf16');
const backends = new Set(results.flatMap((row) => shownVariants.map((variant) => row[variant.key].backend)).filter(Boolean));
console.log(`- sides: ${[...backends].join("; ")}`);
console.log(`- machine: ${describeMachine()}\n`);
const bf16Columns = [
  "PyTorch autocast tokens/s",
  "Flywheel bf16 tokens/s",
  "Flywheel bf16 / PyTorch",
  "Flywheel bf16 / PyTorch autocast",
  "Flywheel / PyTorch autocast",
  "First loss (PyTorch autocast / Flywheel bf16)",
  "Last loss (PyTorch / PyTorch autocast / Flywheel / Flywheel bf16)",
];
const [bf16Header, bf16Align] = values.bf16 ? [` ${bf16Columns.join(" | ")} |`, `${"---:|".repeat(5)}---|---|`] : ["", ""];
console.log(`| Case | Measure | Threads | Tokens/step | PyTorch tokens/s | Flywheel tokens/s | Flywheel / PyTorch | Tokens per CPU-second (PyTorch / Flywheel) | First loss (PyTorch / Flywheel) |${bf16Header}`);
console.log(`|---|---|---:|---:|---:|---:|---:|---|---|${bf16Align}`);
printRows(results, true);
const failed = results.filter((row) => [row.pytorch, row.pytorchAutocast].some((side) => side !== notRun && side.stopped && !stepSeconds(side, row.measure)));
process.exitCode = failed.length > 0 ? 1 : 0;

function printRows(rows: Row[], table = false): void {
  for (const row of rows) {
    const { benchCase, measure, threads, tokens } = row;
    const py = stepSeconds(row.pytorch, measure);
    const fw = stepSeconds(row.flywheel, measure);
    const rate = (run: SideResult) => {
      if (run === notRun) return "not run";
      const time = stepSeconds(run, measure);
      if (!time) return run.stopped ? `< ${(tokens / flywheelTimeout).toFixed(1)} (${run.stopped})` : "—";
      return `${rounded(tokens / time.seconds)}${time.note ? ` (${time.note})` : ""}`;
    };
    /** The Flywheel run's tokens/s over the PyTorch run's; a bound when the Flywheel run stopped before a step. */
    const ratio = (pytorch: SideResult, flywheel: SideResult) => {
      const [pyTime, fwTime] = [stepSeconds(pytorch, measure), stepSeconds(flywheel, measure)];
      if (pyTime && fwTime) return (pyTime.seconds / fwTime.seconds).toFixed(2);
      return pyTime && flywheel.stopped && flywheel !== notRun ? `< ${(pyTime.seconds / flywheelTimeout).toFixed(3)}` : "—";
    };
    const perCpu = (time: ReturnType<typeof stepSeconds>) => (time ? rounded(tokens / time.cpuSeconds) : "—");
    const losses = (run: SideResult) => run.steps.filter((step) => step.measure === measure);
    const shown = (step: StepRecord | undefined) => step?.loss.toFixed(4) ?? "—";
    const firstLoss = (run: SideResult) => shown(losses(run)[0]);
    // The highest index, not the last line: rounds repeat the steps, and one may have stopped early.
    const lastLoss = (run: SideResult) => shown(losses(run).reduce<StepRecord | undefined>((last, step) => (last && last.index >= step.index ? last : step), undefined));
    const bf16Cells = [
      rate(row.pytorchAutocast),
      rate(row.flywheelBf16),
      ratio(row.pytorch, row.flywheelBf16),
      ratio(row.pytorchAutocast, row.flywheelBf16),
      ratio(row.pytorchAutocast, row.flywheel),
      `${firstLoss(row.pytorchAutocast)} / ${firstLoss(row.flywheelBf16)}`,
      [row.pytorch, row.pytorchAutocast, row.flywheel, row.flywheelBf16].map(lastLoss).join(" / "),
    ];
    const cells = [
      benchCase.name,
      measure === "step" ? `${benchCase.mode === "full" ? "full-parameter" : "LoRA"} SFT step` : "forward-only scoring",
      threads,
      tokens,
      rate(row.pytorch),
      rate(row.flywheel),
      ratio(row.pytorch, row.flywheel),
      `${perCpu(py)} / ${perCpu(fw)}`,
      `${firstLoss(row.pytorch)} / ${firstLoss(row.flywheel)}`,
      ...(values.bf16 ? bf16Cells : []),
    ];
    const stops = shownVariants.map(({ key, label }) => (row[key].stopped ? `  [${label} ${row[key].stopped}]` : ""));
    if (table) console.log(`| ${cells.join(" | ")} |`);
    else log(`${cells.join("  ")}${stops.join("")}`);
  }
}

/** The project's Python environment (scripts/python/env.mjs builds it on first use): its interpreter. */
function projectPython(): string {
  const run = spawnSync(process.execPath, [path.join(import.meta.dirname, "..", "scripts", "python", "env.mjs")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const python = run.stdout.trim().split("\n").at(-1);
  if (run.status !== 0 || !python) throw new Error("the Python environment could not be built (node scripts/python/env.mjs)");
  return python;
}
