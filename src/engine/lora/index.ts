/**
 * LoRA adapters in PEFT layout: `adapter_config.json` + `adapter_model.safetensors`.
 *
 *   loadLoraAdapter(dir, model)      read and validate an adapter for a loaded model (the runtime's loader)
 *   createLoraAdapter(config, opts)  a fresh adapter initialised as PEFT does (B = 0: the identity)
 *   saveLoraAdapter(dir, adapter)    write it back in the same layout (PEFT and vLLM load it)
 *   LoraAdapter                      a `LinearAdapter` for `Transformer.forward`, and the trainer's parameters
 */
export * from "./adapter.js";
export * from "./config.js";
export * from "./files.js";
export * from "./init.js";
