import type { KvCache } from "../model/kv-cache.js";

/** A cached KV prefix: the cache holds exactly the positions of `tokens`. */
interface Entry {
  namespace: string;
  tokens: readonly number[];
  cache: KvCache;
  bytes: number;
}

export interface PrefixHit {
  /** A cache of its own holding the first `length` positions, ready to extend. */
  cache: KvCache;
  length: number;
}

/**
 * KV caches of earlier sequences, reused for later ones that start with the same tokens. Entries
 * live in namespaces (adapter identity + cache_salt, `prefixNamespace`): a request only ever sees
 * KV computed under its own adapter and salt. A hit copies the shared prefix into a new cache, so
 * entries are never written to. No entry is a prefix of another in its namespace (a longer
 * sequence replaces the prefixes it covers), and the total size stays under `maxBytes`, the least
 * recently used entries dropped first.
 *
 * Lookups compare tokens with each entry of the namespace: O(cached tokens), which the byte bound
 * keeps small next to one forward pass.
 */
export class PrefixCache {
  /** In order of use, least recent first (a Map keeps insertion order). */
  private readonly entries = new Map<Entry, true>();
  private totalBytes = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.totalBytes;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The longest cached prefix of `tokens` of at most `maxLength` tokens, copied, or null. */
  lookup(namespace: string, tokens: readonly number[], maxLength: number): PrefixHit | null {
    let best: Entry | null = null;
    let bestLength = 0;
    for (const entry of this.entries.keys()) {
      if (entry.namespace !== namespace) continue;
      const length = commonPrefix(entry.tokens, tokens, Math.min(maxLength, entry.cache.length));
      if (length > bestLength) {
        best = entry;
        bestLength = length;
      }
    }
    if (!best) return null;
    this.touch(best);
    return { cache: best.cache.fork(bestLength), length: bestLength };
  }

  /**
   * Keeps `cache` (which must hold exactly `tokens`' positions and is never written again) for
   * later lookups. Returns false when it was not kept: an entry already covers it, or it alone
   * exceeds the budget.
   */
  insert(namespace: string, tokens: readonly number[], cache: KvCache): boolean {
    if (cache.length !== tokens.length) throw new RangeError(`a prefix cache entry of ${tokens.length} tokens holds ${cache.length} positions`);
    if (tokens.length === 0 || cache.byteSize > this.maxBytes) return false;
    for (const entry of this.entries.keys()) {
      if (entry.namespace !== namespace) continue;
      if (entry.tokens.length >= tokens.length && commonPrefix(entry.tokens, tokens, tokens.length) === tokens.length) {
        this.touch(entry);
        return false;
      }
      if (commonPrefix(entry.tokens, tokens, entry.tokens.length) === entry.tokens.length) this.remove(entry);
    }
    const entry: Entry = { namespace, tokens: [...tokens], cache, bytes: cache.byteSize };
    this.entries.set(entry, true);
    this.totalBytes += entry.bytes;
    for (const oldest of this.entries.keys()) {
      if (this.totalBytes <= this.maxBytes) break;
      this.remove(oldest);
    }
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.totalBytes = 0;
  }

  private touch(entry: Entry): void {
    this.entries.delete(entry);
    this.entries.set(entry, true);
  }

  private remove(entry: Entry): void {
    if (this.entries.delete(entry)) this.totalBytes -= entry.bytes;
  }
}

/** The namespace of a request's KV: equal only for the same adapter and the same cache_salt. */
export function prefixNamespace(adapterId: string | undefined, cacheSalt: string | undefined): string {
  return JSON.stringify([adapterId ?? null, cacheSalt ?? null]);
}

/** How many leading tokens `a` and `b` share, looking at most `limit` of them. */
function commonPrefix(a: readonly number[], b: readonly number[], limit: number): number {
  const end = Math.min(limit, a.length, b.length);
  let i = 0;
  while (i < end && a[i] === b[i]) i++;
  return i;
}
