import { createRequire } from "node:module";

/**
 * Emoji handling of reaction feedback (`docs/api/trace.md#feedback`), as Weave's Python server does it with
 * the `emoji` package: count the emoji in a string, "demojize" them to `:cldr_short_name:` aliases,
 * and "detone" them (drop skin-tone modifiers). Names come from the Unicode CLDR data of
 * `unicode-emoji-json`, loaded on first use.
 */
type EmojiData = Record<string, { slug: string }>;

let names: EmojiData | undefined;
function emojiNames(): EmojiData {
  names ??= createRequire(import.meta.url)("unicode-emoji-json/data-by-emoji.json") as EmojiData;
  return names;
}

// The `v` flag is written through the constructor: the TypeScript target predates it.
// biome-ignore lint/complexity/useRegexLiterals: a literal with the v flag does not compile for this target
const EMOJI = new RegExp("\\p{RGI_Emoji}|\\p{Extended_Pictographic}\\uFE0F?", "gv");
const SKIN_TONES: Record<string, string> = {
  "\u{1F3FB}": "light_skin_tone",
  "\u{1F3FC}": "medium-light_skin_tone",
  "\u{1F3FD}": "medium_skin_tone",
  "\u{1F3FE}": "medium-dark_skin_tone",
  "\u{1F3FF}": "dark_skin_tone",
};
const SKIN_TONE = /[\u{1F3FB}-\u{1F3FF}]/gu;

export function countEmoji(text: string): number {
  return text.match(EMOJI)?.length ?? 0;
}

/** Removes skin-tone modifiers. */
export function detone(text: string): string {
  return text.replace(SKIN_TONE, "");
}

function nameOf(emoji: string): string | undefined {
  const table = emojiNames();
  const base = detone(emoji);
  const slug = table[base]?.slug ?? table[`${base}\uFE0F`]?.slug ?? table[base.replace(/\uFE0F/g, "")]?.slug;
  if (!slug) return undefined;
  const tones = [...emoji.matchAll(SKIN_TONE)].map((match) => SKIN_TONES[match[0]]);
  return [slug, ...tones].join("_");
}

/** Replaces each emoji with `:name:` (unknown ones stay as they are). */
export function demojize(text: string): string {
  return text.replace(EMOJI, (emoji) => {
    const name = nameOf(emoji);
    return name ? `:${name}:` : emoji;
  });
}
