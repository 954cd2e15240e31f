import type { WeightMatrix } from "../../kernels/types.js";
import type { Transformer } from "../../model/transformer.js";
import type { LoraGradients } from "./lora-gradients.js";

/** One trainable tensor of a model under its Hugging Face name, as a live view of the weights the forward uses. */
export interface NamedParameter {
  name: string;
  shape: number[];
  values: Float32Array;
}

/**
 * Every distinct tensor of a model, in checkpoint order and Hugging Face names (`model.` prefix):
 * the embedding, each layer's norms, projections and biases, the final norm, and `lm_head` unless
 * it is tied to the embedding (then it is the same tensor, listed once). Writing `values` changes
 * the model.
 */
export function modelParameters(transformer: Transformer): NamedParameter[] {
  const { kernels } = transformer;
  const { weights } = transformer;
  const parameters: NamedParameter[] = [];
  const matrix = (name: string, w: WeightMatrix) => parameters.push({ name, shape: [w.rows, w.cols], values: kernels.weightValues(w) });
  const vector = (name: string, values: Float32Array) => parameters.push({ name, shape: [values.length], values });
  matrix("model.embed_tokens.weight", weights.embedTokens);
  weights.layers.forEach((layer, index) => {
    const prefix = `model.layers.${index}`;
    vector(`${prefix}.input_layernorm.weight`, layer.inputNorm);
    for (const [name, linear] of [
      ["q_proj", layer.q],
      ["k_proj", layer.k],
      ["v_proj", layer.v],
      ["o_proj", layer.o],
    ] as const) {
      matrix(`${prefix}.self_attn.${name}.weight`, linear.weight);
      if (linear.bias) vector(`${prefix}.self_attn.${name}.bias`, linear.bias);
    }
    if (layer.qNorm) vector(`${prefix}.self_attn.q_norm.weight`, layer.qNorm);
    if (layer.kNorm) vector(`${prefix}.self_attn.k_norm.weight`, layer.kNorm);
    vector(`${prefix}.post_attention_layernorm.weight`, layer.postAttentionNorm);
    for (const [name, linear] of [
      ["gate_proj", layer.gate],
      ["up_proj", layer.up],
      ["down_proj", layer.down],
    ] as const) {
      matrix(`${prefix}.mlp.${name}.weight`, linear.weight);
      if (linear.bias) vector(`${prefix}.mlp.${name}.bias`, linear.bias);
    }
  });
  vector("model.norm.weight", weights.finalNorm);
  if (weights.lmHead !== weights.embedTokens) matrix("lm_head.weight", weights.lmHead);
  for (const { name, shape, values } of parameters) {
    if (values.length !== shape.reduce((a, b) => a * b, 1)) throw new Error(`${name} has ${values.length} values for shape [${shape.join(", ")}]`);
  }
  return parameters;
}

/**
 * dLoss/dθ for every weight of a model (full-parameter training), aligned with
 * `modelParameters`: `tensors[i]` is the gradient of `parameters[i].values`. The backward finds a
 * tensor's gradient by the identity of its values, so a tied lm_head adds into the embedding's.
 */
export class ModelGradients {
  readonly parameters: NamedParameter[];
  readonly tensors: Float32Array[];
  private readonly byValues = new Map<Float32Array, Float32Array>();

  constructor(readonly transformer: Transformer) {
    this.parameters = modelParameters(transformer);
    this.tensors = this.parameters.map(({ values }) => {
      const gradient = new Float32Array(values.length);
      this.byValues.set(values, gradient);
      return gradient;
    });
  }

  /** The live weight tensors, in `tensors` order (what AdamW updates). */
  values(): Float32Array[] {
    return this.parameters.map(({ values }) => values);
  }

  /** The gradient of a norm weight or bias (by identity). */
  of(values: Float32Array): Float32Array {
    const gradient = this.byValues.get(values);
    if (!gradient) throw new Error("this tensor is not a weight of the model these gradients belong to");
    return gradient;
  }

  /** The gradient of a weight matrix. */
  matrix(weight: WeightMatrix): Float32Array {
    return this.of(this.transformer.kernels.weightValues(weight));
  }

  zero(): void {
    for (const tensor of this.tensors) tensor.fill(0);
  }

  /** For tests and debugging: the gradient of one tensor by its Hugging Face name. */
  get(name: string): Float32Array | undefined {
    const index = this.parameters.findIndex((parameter) => parameter.name === name);
    return index < 0 ? undefined : this.tensors[index];
  }
}

/** What a backward pass fills: a LoRA adapter's factor gradients, or every weight's. */
export type ParameterGradients = LoraGradients | ModelGradients;
