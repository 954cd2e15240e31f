import { parentPort } from "node:worker_threads";
import { ChatTemplateError, renderChatTemplate } from "./chat-template.js";
import type { TemplateJob, TemplateReply } from "./chat-template-pool.js";
import { DirTokenizers } from "./tokenizer/dir-tokenizers.js";

/**
 * A chat-template rendering thread (`ChatTemplatePool`): renders one job at a time, tokenizes the
 * render when the job asks, and answers with the text (and ids) or the error. It says `ready` once
 * loaded, so the pool's time limit counts only the work.
 */
const port = parentPort!;
const tokenizers = new DirTokenizers();

function run(job: TemplateJob): TemplateReply {
  const text = renderChatTemplate(job.template, job.request);
  if (text.length > job.maxOutputChars) {
    return { id: job.id, error: { kind: "limit", message: `The chat template rendered ${text.length} characters, more than this server's limit of ${job.maxOutputChars} (FLYWHEEL_MAX_PROMPT_CHARS)` } };
  }
  if (!job.tokenize) return { id: job.id, text };
  const ids = tokenizers.get(job.tokenize.tokenizerDir).encode(text, { addSpecialTokens: job.tokenize.addSpecialTokens });
  return { id: job.id, text, tokenIds: Uint32Array.from(ids) };
}

port.on("message", (job: TemplateJob) => {
  let reply: TemplateReply;
  try {
    reply = run(job);
  } catch (error) {
    const kind = error instanceof ChatTemplateError ? error.kind : "render";
    reply = { id: job.id, error: { kind, message: error instanceof Error ? error.message : String(error) } };
  }
  port.postMessage(reply, "tokenIds" in reply && reply.tokenIds ? [reply.tokenIds.buffer as ArrayBuffer] : []);
});
port.postMessage({ ready: true });
