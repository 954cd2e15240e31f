import { parentPort, workerData } from "node:worker_threads";
import { TsKernels } from "../../kernels/ts/index.js";
import { loadModel } from "../../model/load.js";
import { Trainer } from "../trainer.js";
import { modelParameters } from "../transformer/model-gradients.js";
import type { FromReplica, ReplicaInit, ToReplica } from "./protocol.js";

/**
 * One replica of data-parallel full-parameter training: loads the checkpoint on the TypeScript
 * kernels, computes gradients of its share of each batch, and applies the summed gradients it is
 * sent, so every replica's weights and optimizer stay identical.
 */
const port = parentPort!;
const post = (message: FromReplica, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
const init = workerData as ReplicaInit;

let trainer: Trainer;
try {
  const model = loadModel(init.dir, { kernels: new TsKernels() });
  trainer = new Trainer(model.transformer, "full");
  post({ type: "ready", parameterCount: trainer.parameterCount });
} catch (error) {
  post({ type: "load-failed", message: (error as Error).message });
  process.exit(1);
}

port.on("message", (message: ToReplica) => {
  try {
    if (message.type === "gradients") {
      const loss = trainer.computeSftGradients(message.sequences, message.numTrainableTokens);
      const gradients = trainer.gradientTensors.map((tensor) => tensor.slice());
      post({ type: "gradients", loss, gradients }, gradients.map((tensor) => tensor.buffer as ArrayBuffer));
    } else if (message.type === "step") {
      trainer.gradientTensors.forEach((tensor, i) => tensor.set(message.gradients[i]!));
      post({ type: "stepped", gradNorm: trainer.applyGradients("sft", message.learningRate) });
    } else if (message.type === "parameters") {
      post({ type: "parameters", parameters: modelParameters(trainer.transformer).map(({ name, shape, values }) => ({ name, shape, values: values.slice() })) });
    } else {
      port.close();
    }
  } catch (error) {
    post({ type: "failed", message: (error as Error).message });
  }
});
