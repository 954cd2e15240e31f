import { type AdapterLoader, type ConstraintBackendFactory, noAdapterLoader } from "./seams.js";
import { xgrammarBackend } from "./xgrammar-backend.js";

/**
 * The structured-output backend and LoRA loader an engine thread uses. Functions cannot cross
 * into a worker thread, so the thread takes them from here; this is the one place to plug in the
 * PEFT loader (src/engine/lora/).
 */
export const engineThreadDeps: { constraints: ConstraintBackendFactory; adapterLoader: AdapterLoader } = {
  constraints: xgrammarBackend,
  adapterLoader: noAdapterLoader,
};
