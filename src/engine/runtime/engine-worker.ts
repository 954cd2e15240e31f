import { parentPort, workerData } from "node:worker_threads";
import { selectKernels } from "../kernels/select.js";
import { loadModel } from "../model/load.js";
import { EngineCore } from "./engine-core.js";
import { toWireError } from "./errors.js";
import type { EngineCall, EngineThreadInit, FromEngineThread, ToEngineThread } from "./protocol.js";
import { engineThreadDeps } from "./worker-deps.js";

/**
 * The engine thread of one model: loads it, then runs `EngineCore` steps while there is work,
 * taking messages in between steps and sending each step's events in one message.
 */

const port = parentPort!;
const init = workerData as EngineThreadInit;
const send = (message: FromEngineThread) => port.postMessage(message);

async function start(): Promise<EngineCore> {
  const model = loadModel(init.dir, { kernels: selectKernels({ choice: init.kernels }) });
  const constraints = await engineThreadDeps.constraints(model);
  return new EngineCore({ model, scheduler: init.scheduler, constraints, adapterLoader: engineThreadDeps.adapterLoader });
}

async function answer(core: EngineCore, callId: number, call: EngineCall): Promise<void> {
  try {
    const value = call.kind === "stats" ? core.stats() : await core.checkConstraint(call.constraint);
    send({ type: "reply", callId, ok: true, value });
  } catch (error) {
    send({ type: "reply", callId, ok: false, error: toWireError(error) });
  }
}

async function serve(core: EngineCore): Promise<void> {
  let closing = false;
  let wake: (() => void) | null = null;
  port.on("message", (message: ToEngineThread) => {
    if (message.type === "generate") core.submit(message.request);
    else if (message.type === "cancel") core.cancel(message.requestId);
    else if (message.type === "call") void answer(core, message.callId, message.call);
    else closing = true;
    wake?.();
  });
  const flush = () => {
    const updates = core.takeUpdates();
    if (updates.length > 0) send({ type: "updates", updates });
  };
  send({ type: "ready" });
  while (!closing) {
    if (core.idle) {
      await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      continue;
    }
    await core.step();
    flush();
    // Let queued messages (new requests, cancellations) in before the next step.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  core.abortAll();
  flush();
  send({ type: "closed" });
  port.close();
}

const core = await start().catch((error: unknown) => {
  send({ type: "load-failed", error: toWireError(error) });
  port.close();
  return null;
});
if (core) await serve(core);
