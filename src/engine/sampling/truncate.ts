/**
 * truncate_prompt_tokens (`docs/api/chat.md#sampling-fields`): keep the last k prompt tokens (generation models
 * truncate on the left); -1 keeps as many as fit, i.e. the last `maxPromptTokens`; null keeps all.
 * A prompt already short enough is returned unchanged. k = 0 keeps nothing — the caller then
 * rejects the empty prompt like any other.
 */
export function truncatePrompt(promptTokenIds: readonly number[], truncatePromptTokens: number | null, maxPromptTokens: number): number[] {
  if (truncatePromptTokens === null) return [...promptTokenIds];
  if (!Number.isInteger(truncatePromptTokens) || truncatePromptTokens < -1) {
    throw new RangeError(`truncate_prompt_tokens must be -1 or a non-negative integer, got ${truncatePromptTokens}`);
  }
  const keep = truncatePromptTokens === -1 ? Math.max(0, maxPromptTokens) : truncatePromptTokens;
  return keep >= promptTokenIds.length ? [...promptTokenIds] : promptTokenIds.slice(promptTokenIds.length - keep);
}
