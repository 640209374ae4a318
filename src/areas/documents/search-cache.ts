import type { Platform } from '../../core/context.js';

/**
 * Ranked search results, remembered per query and checked against the database before every use.
 *
 * Why: ranking is exact, so a search ranks every match (a word found in 60,000 documents ranks 60,000 rows), and
 * pages 2, 3, ... of the same search, the same search from another tab or a dashboard would pay that again. An
 * entry holds the first SEARCH_CACHE_DEPTH matches in order (ids and ranks) and the total, labelled with the
 * organization's documents version (the highest change number of its documents in sync_changes, which every
 * insert, update, re-index and delete of a document raises). It is used only while that version is unchanged and
 * no document write of the organization is in flight (documents.repo searchVersion), so it never serves a result
 * the database would not give now. Per node; another node keeps its own.
 */
export const SEARCH_CACHE_DEPTH = 200;
const MAX_ENTRIES = 1_000;

export interface SearchCacheEntry { version: number; total: number; ids: string[]; ranks: number[] }

export class SearchCache {
  private entries = new Map<string, SearchCacheEntry>();

  /** The entry of a key whatever its version (to fetch its page with the version check in one statement). */
  peek(key: string): SearchCacheEntry | undefined { return this.entries.get(key); }

  /** The entry of a key if it was made at `version` (else it is dropped). */
  get(key: string, version: number): SearchCacheEntry | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.version !== version) { this.entries.delete(key); return undefined; }
    // Most recently used last: Map keeps insertion order, so the first key is the one to evict.
    this.entries.delete(key);
    this.entries.set(key, e);
    return e;
  }

  set(key: string, entry: SearchCacheEntry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number { return this.entries.size; }
}

const byPlatform = new WeakMap<Platform, SearchCache>();

export function searchCache(platform: Platform): SearchCache {
  let c = byPlatform.get(platform);
  if (!c) { c = new SearchCache(); byPlatform.set(platform, c); }
  return c;
}
