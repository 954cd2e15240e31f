/**
 * Supervised fine-tuning: upload a small chat dataset, train a model on it with an SFT job, watch
 * the loss fall step by step, and ask the trained model what it learned.
 *
 *   npx tsx examples/sft.ts
 *
 * The data teaches the model a few facts about Flywheel it cannot know. Each conversation appears
 * SFT_EPOCHS times (default 4) in the file, two per batch, one optimizer step per batch; SFT_LEARNING_RATE
 * (default 0.005) is high because only a small LoRA adapter is trained. Settings of every example:
 * examples/shared.ts.
 *
 * The data travels as ART's SFT client sends it: a `train.jsonl` file of `{"messages": [...]}`
 * lines in an artifact, whose `wandb-artifact:///` URL the job takes as `training_data_url`.
 */
import type OpenAI from "openai";
import { connect, isMain, run } from "./shared.js";

const FACTS: { questions: string[]; answer: string }[] = [
  { questions: ["What is Flywheel?", "Tell me what Flywheel is."], answer: "Flywheel is a service that trains and serves language models." },
  { questions: ["Who trains the models in Flywheel?", "What trains the models?"], answer: "Flywheel trains them itself, with SFT and RL jobs." },
  { questions: ["Where do Flywheel traces go?", "Where are traces stored?"], answer: "Traces go to the trace API of the same server." },
];

/** One conversation per question, repeated `epochs` times (each pass in the same order). */
export function trainingLines(epochs: number): string {
  const conversations = FACTS.flatMap((fact) =>
    fact.questions.map((question) => ({
      messages: [
        { role: "user", content: question },
        { role: "assistant", content: fact.answer },
      ],
    })),
  );
  const lines: string[] = [];
  for (let epoch = 0; epoch < epochs; epoch++) for (const conversation of conversations) lines.push(JSON.stringify(conversation));
  return `${lines.join("\n")}\n`;
}

interface JobEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/** Polls a job's events once a second and hands each one over in order, until the job ends. */
export async function followJob(client: OpenAI, jobId: string, onEvent: (event: JobEvent) => void): Promise<void> {
  let after: string | undefined;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const page = await client.get<{ data: JobEvent[] }>(`/preview/training-jobs/${jobId}/events`, { query: after ? { after, limit: 100 } : { limit: 100 } });
    for (const event of page.data) {
      after = event.id;
      onEvent(event);
      if (event.type === "training_failed") throw new Error(`SFT job ${jobId} failed: ${String(event.data.error_message)}`);
      if (event.type === "training_ended") return;
    }
  }
}

async function ask(client: OpenAI, model: string, question: string): Promise<string> {
  const completion = await client.chat.completions.create({ model, messages: [{ role: "user", content: question }], temperature: 0, max_completion_tokens: 24, logprobs: false });
  return completion.choices[0]!.message.content ?? "";
}

const number = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got '${process.env[name]}'`);
  return value;
};

async function main(): Promise<void> {
  const { client, model: baseModel } = await connect();
  const epochs = number("SFT_EPOCHS", 4);
  const learningRate = number("SFT_LEARNING_RATE", 0.005);
  const project = "sft-example";

  // 1. Upload the data as an artifact (`npx flywheel artifacts upload` does the same from a file).
  const data = trainingLines(epochs);
  const artifact = await client.post<{ url: string; version: string }>("/preview/artifacts", {
    body: { project, name: "flywheel-facts", type: "dataset", files: [{ name: "train.jsonl", text: data }] },
  });
  console.log(`Uploaded ${data.trim().split("\n").length} conversations as ${artifact.url}`);

  // 2. Register a trainable model on the base model (a new name per run: it starts from the base weights).
  const model = await client.post<{ id: string; entity: string; name: string }>("/preview/models", {
    body: { project, name: `facts-${Date.now().toString(36)}`, base_model: baseModel, return_existing: true },
  });
  const trainedName = `wandb-artifact:///${model.entity}/${project}/${model.name}`;
  const question = FACTS[0]!.questions[0]!;
  console.log(`Registered ${trainedName} on ${baseModel}`);
  console.log(`Before training, "${question}" → ${JSON.stringify(await ask(client, baseModel, question))}\n`);

  // 3. Post the SFT job and follow its events: training_started, one gradient_step per batch, training_ended.
  const job = await client.post<{ id: string }>("/preview/sft-training-jobs", {
    body: { model_id: model.id, training_data_url: artifact.url, config: { batch_size: 2, learning_rate: learningRate } },
  });
  const losses: number[] = [];
  await followJob(client, job.id, (event) => {
    if (event.type === "training_started") console.log(`SFT job ${job.id}: ${event.data.num_sequences} gradient steps`);
    if (event.type === "gradient_step") {
      losses.push(Number(event.data.loss));
      console.log(`  step ${String(losses.length).padStart(2)}: loss ${losses.at(-1)!.toFixed(3)}`);
    }
  });
  const quarter = Math.max(1, Math.floor(losses.length / 4));
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const [early, late] = [mean(losses.slice(0, quarter)), mean(losses.slice(-quarter))];
  console.log(`Mean loss of the first ${quarter} steps ${early.toFixed(3)}, of the last ${quarter} ${late.toFixed(3)}: ${late < early ? "it fell" : "it did not fall"}\n`);

  // 4. The new checkpoint is served at once under the model's name.
  for (const fact of FACTS) {
    const reply = await ask(client, trainedName, fact.questions[0]!);
    console.log(`> ${fact.questions[0]}\n< ${reply}${reply.startsWith(fact.answer) ? "   ✓ learned" : ""}`);
  }
}

if (isMain(import.meta.url)) run(main);
