const DELIMITERS = [",", ";", "|", " ", "/", "?", "."];

/**
 * Shortens a name to `maxLength` characters at a delimiter where possible, ending with `abbrev`
 * (Weave's `shorten_name`, used for long span names and display names).
 */
export function shortenName(name: string, maxLength: number, abbrev = "...", delimiterInAbbrev = true): string {
  const chars = [...name];
  if (chars.length <= maxLength) return name;
  const parts = name.split(/([,;| /?.])/).filter((part) => part !== "");
  const keep = maxLength - [...abbrev].length;
  if (parts.length <= 1 || [...parts[0]!].length > keep) return chars.slice(0, keep).join("") + abbrev;
  let shortened = parts[0]!;
  for (let i = 1; i < parts.length; i++) {
    let delimiter = "";
    while (i < parts.length && DELIMITERS.includes(parts[i]!)) delimiter += parts[i++];
    if (i >= parts.length) return shortened + abbrev;
    const next = `${delimiter}${parts[i]}`;
    const tail = abbrev.length === 0 ? "" : abbrev.startsWith(delimiter) || !delimiterInAbbrev ? abbrev : `${delimiter}${abbrev}`;
    if ([...shortened].length + [...next].length >= maxLength - [...tail].length) return shortened + tail;
    shortened += next;
  }
  return shortened;
}
