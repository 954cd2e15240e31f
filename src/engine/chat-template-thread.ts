import { parentPort } from "node:worker_threads";
import { ChatTemplateError, renderChatTemplate } from "./chat-template.js";
import type { TemplateJob, TemplateReply } from "./chat-template-pool.js";

/**
 * A chat-template rendering thread (`ChatTemplatePool`): renders one job at a time and answers
 * with the text or the error. It says `ready` once loaded, so the pool's time limit counts only
 * rendering.
 */
const port = parentPort!;
port.on("message", (job: TemplateJob) => {
  let reply: TemplateReply;
  try {
    const text = renderChatTemplate(job.template, job.request);
    reply =
      text.length > job.maxOutputChars
        ? { id: job.id, error: { kind: "limit", message: `The chat template rendered ${text.length} characters, more than this server's limit of ${job.maxOutputChars} (FLYWHEEL_MAX_PROMPT_CHARS)` } }
        : { id: job.id, text };
  } catch (error) {
    const kind = error instanceof ChatTemplateError ? error.kind : "render";
    reply = { id: job.id, error: { kind, message: error instanceof Error ? error.message : String(error) } };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true });
