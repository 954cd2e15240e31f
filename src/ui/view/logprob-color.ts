/**
 * A token's background by its sampled probability: green when the model was sure (p → 1), through
 * yellow, to red for unlikely tokens (p → 0). Hue is linear in p, so equal steps look equal.
 */
export function logprobColor(logprob: number): string {
  if (!Number.isFinite(logprob)) return "hsl(0, 0%, 85%)";
  const probability = Math.min(1, Math.max(0, Math.exp(logprob)));
  return `hsl(${Math.round(probability * 120)}, 70%, 80%)`;
}

export function describeLogprob(logprob: number): string {
  if (!Number.isFinite(logprob)) return "no logprob";
  return `logprob ${logprob.toFixed(4)} · p ${Math.exp(logprob).toFixed(4)}`;
}

/** A token's hover text: the sampler's logprob, and the trainer's with the difference when it scored the token. */
export function describeTokenLogprobs(logprob: number, trainerLogprob: number | null | undefined): string {
  const sampler = `sampler ${describeLogprob(logprob)}`;
  if (trainerLogprob === undefined) return sampler;
  if (trainerLogprob === null) return `${sampler}\ntrainer: not scored`;
  const difference = Number.isFinite(logprob) ? ` · difference ${(trainerLogprob - logprob).toFixed(4)}` : "";
  return `${sampler}\ntrainer logprob ${trainerLogprob.toFixed(4)}${difference}`;
}
