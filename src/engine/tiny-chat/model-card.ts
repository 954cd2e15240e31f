import fs from "node:fs";
import path from "node:path";
import type { BuildReport } from "./build.js";
import { TASK_NAMES, type TaskName } from "./examples.js";
import type { TaskAccuracy } from "./evaluate.js";
import { NAME_PROBES, type NameProbe } from "./name-probe.js";
import type { TinyChatRecipe } from "./recipe.js";

/** How the build ran, for the model card (not part of the recipe: it does not change the weights). */
export interface BuildContext {
  command: string;
  wallSeconds: number;
  machine: string;
}

const TASK_DESCRIPTIONS: Record<TaskName, string> = {
  arithmetic: "additions and subtractions of numbers below 100, answered with the number (held out: operand pairs never trained)",
  tool_call: "a request for the weather, a unit conversion or a calculation, answered with the right Hermes `<tool_call>` (name and arguments)",
  tool_answer: "the reply after the tool's result, which must state the result's values",
  json: "fields of a sentence (person, product, weather) extracted into a JSON object equal to the expected one",
  conversation: "greetings, capitals, opposites, weekdays, and remembering the user's name over several turns",
  three_terms: "sums of three numbers from 1 to 30, worked as two column additions (3% of the training mix; the RL example teaches the same work on terms from 20 to 49)",
};

// One decimal where it is not whole: 193/200 is 96.5%, which must not read as a 97% bar met.
const percent = (value: number) => `${Number((100 * value).toFixed(1))}%`;

/** eval.json: the recipe, the held-out accuracy per task and the untrained baseline, as numbers. */
export function evalJson(recipe: TinyChatRecipe, report: BuildReport, context: BuildContext): Record<string, unknown> {
  return { model: "flywheel/tiny-chat", command: context.command, recipe, ...report, wallSeconds: Math.round(context.wallSeconds), machine: context.machine };
}

/** README.md of the model directory: what it is, how it was made, how well it does. */
export function modelCard(recipe: TinyChatRecipe, report: BuildReport, context: BuildContext, sizeBytes: number): string {
  const rows = TASK_NAMES.map((task) => {
    const trained = report.heldOut[task];
    const baseline = report.untrainedBaseline[task];
    return `| ${task} | ${trained ? `${percent(trained.accuracy)} (${trained.correct}/${trained.total})` : "–"} | ${baseline ? `${percent(baseline.accuracy)} (${baseline.correct}/${baseline.total})` : "–"} | ${TASK_DESCRIPTIONS[task]} |`;
  });
  const { shape, schedule } = recipe;
  return `# flywheel/tiny-chat

A small chat model trained from scratch by Flywheel's own trainer, so that \`npm start\` serves a model
that does something and the whole loop runs on a laptop CPU. It knows only what its synthetic
instruction set teaches: short arithmetic, three example tools, JSON extraction and brief
conversations. It is a demonstration, not a general assistant.

- Architecture: Qwen2 (\`Qwen2ForCausalLM\`), ${shape.numLayers} layers, hidden ${shape.hiddenSize}, ${shape.numHeads} heads / ${shape.numKvHeads} KV heads, MLP ${shape.intermediateSize}, tied embeddings, context ${shape.maxPositionEmbeddings}.
- ${(report.parameters / 1e6).toFixed(2)}M parameters, ${recipe.dtype} weights (${(sizeBytes / 1e6).toFixed(1)} MB of safetensors).
- Tokenizer: byte-level BPE of ${recipe.bpeVocabSize} pieces trained on the synthetic conversations, digits split one by one, plus the ChatML, \`<think>\` and tool tokens.
- Chat template: ChatML with Hermes-style tools (\`<tool_call>{"name": …, "arguments": …}</tool_call>\`) and \`<think>\` blocks.
- Sampling defaults: greedy (\`temperature\` 0 in generation_config.json); a request's own settings win.

## Held-out accuracy

Greedy replies through Flywheel's engine to ${report.heldOut.arithmetic?.total ?? 0} held-out examples per task: examples whose content
(operand pair, tool request, record, question wording) never occurs in training. The untrained
baseline is the same model at its random initialisation, scored the same way.

| Task | Trained | Untrained | What is checked |
|---|---|---|---|
${rows.join("\n")}
${weakTasksNote(report)}
## How it answers

- Arithmetic: it works a sum or difference column by column (ones with the carry or borrow, then
  tens) in a \`<think>\` block, which the chat API returns as \`reasoning\`; \`content\` is
  the number alone. With thinking switched off (\`chat_template_kwargs: {"enable_thinking": false}\`)
  it must answer without that work, which it was never taught: expect wrong numbers.
- Names, cities and fields are copied from the prompt. Two thirds of the training names are
  made-up strings of one to three syllables, so a name can only be right by copying it.

## Names it never saw

Greedy, through the engine, after an introduction (\`My name is …\` and other phrasings): the
greeting that follows it, and the name asked back later (\`What is my name?\`), for names no
training example holds in that form.

| Names | Greeting | Asked back |
|---|---|---|
${nameRows(report)}

## Limits

It knows only its synthetic tasks: two-number arithmetic below 100 (sums of three numbers only
with terms up to 30: with larger terms it miscopies them into its work, which is what the RL
example teaches; larger numbers are out of its range), the three tools below with the cities and
units it was trained on, JSON records of four kinds, and a few hundred facts and phrasings
(capitals, opposites, weekdays, greetings). Anything else gets a fluent reply in one of those
shapes, not an answer. Names are copied less reliably when they are new (the table above).
Context is ${shape.maxPositionEmbeddings} tokens.

## The tools it calls

Send the tool definitions of \`src/engine/tiny-chat/tools.ts\` (all three, or just the one needed):
\`get_weather(city)\`, \`convert_units(value, from_unit, to_unit)\` (km, miles, kg, pounds, meters,
feet, celsius, fahrenheit) and \`calculate(expression)\`. With \`tool_choice\` \`auto\` the reply is a
Hermes tool call; after a \`tool\` message with the result it answers in words.

## How it was made

\`${context.command}\` (seed ${recipe.seed}) regenerates everything here: the training set (${report.trainExamples} conversations),
the tokenizer, the initial weights, ${schedule.steps} full-parameter AdamW steps of ${schedule.examplesPerStep} conversations
(learning rate ${schedule.peakLearningRate} after ${schedule.warmupSteps} warm-up steps, cosine decay to ${schedule.finalLearningRateFraction} of it, gradient
clipping at 1.0, loss on assistant turns only, ${report.trainTokens} tokens in all) on Flywheel's native kernels with
${recipe.threads} threads, and this evaluation. Final training loss ${report.finalLoss.toFixed(3)}. Training took
${(report.trainSeconds / 60).toFixed(1)} minutes of wall time and ${(report.trainCpuSeconds / 60).toFixed(1)} CPU-minutes (all threads), the whole build
${(context.wallSeconds / 60).toFixed(1)} minutes (${context.machine}). The same seed and thread count give the same bytes run after run (checked on one machine).
`;
}

const NAME_PROBE_LABELS: Record<NameProbe, string> = {
  made_up: "made-up, one to three syllables, reserved for this probe",
  real_unseen: "real names absent from the training list (Fatima, Hiroshi, Svetlana, …)",
  new_phrasing: 'training-list names in untrained phrasings ("I\'m called Bob.")',
};

function nameRows(report: BuildReport): string {
  const cell = ({ correct, total, accuracy }: TaskAccuracy) => `${percent(accuracy)} (${correct}/${total})`;
  return NAME_PROBES.map((probe) => `| ${NAME_PROBE_LABELS[probe]} | ${cell(report.names[probe].greeting)} | ${cell(report.names[probe].recall)} |`).join("\n");
}

/** Says plainly which tasks the model mostly fails (empty when it passes them all). */
function weakTasksNote(report: BuildReport): string {
  const weak = TASK_NAMES.filter((task) => task !== "three_terms" && (report.heldOut[task]?.accuracy ?? 0) < 0.5);
  if (weak.length === 0) return "";
  return `
Below 50% on ${weak.join(", ")}: at this size and step count the model writes each task's format (a
number, a Hermes tool call, a JSON object, a reply sentence) but often not the values that must be
copied from the prompt or computed. Structured outputs and \`tool_choice\` \`required\` still parse,
since the engine constrains them to the schema.
`;
}

/** Writes eval.json and README.md into the model directory. */
export function writeModelCard(dir: string, recipe: TinyChatRecipe, report: BuildReport, context: BuildContext): void {
  const sizeBytes = fs.statSync(path.join(dir, "model.safetensors")).size;
  fs.writeFileSync(path.join(dir, "eval.json"), `${JSON.stringify(evalJson(recipe, report, context), null, 2)}\n`);
  fs.writeFileSync(path.join(dir, "README.md"), modelCard(recipe, report, context, sizeBytes));
}
