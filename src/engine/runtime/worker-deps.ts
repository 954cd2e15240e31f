import { loadLoraAdapter } from "../lora/files.js";
import type { AdapterLoader, ConstraintBackendFactory } from "./seams.js";
import { xgrammarBackend } from "./xgrammar-backend.js";

/**
 * The structured-output backend and LoRA loader an engine thread uses. Functions cannot cross
 * into a worker thread, so the thread takes them from here.
 */
export const engineThreadDeps: { constraints: ConstraintBackendFactory; adapterLoader: AdapterLoader } = {
  constraints: xgrammarBackend,
  adapterLoader: (ref, model) => loadLoraAdapter(ref.dir, model),
};
