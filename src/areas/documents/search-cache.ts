import { perPlatform } from '../../core/per-platform.js';
import type { DocumentListItemT } from './documents.schemas.js';

/**
 * Ranked search results, remembered per query and checked against the database before every use.
 *
 * Why: ranking is exact, so a search ranks every match (a word found in 60,000 documents ranks 60,000 rows), and
 * pages 2, 3, ... of the same search, the same search from another tab or a dashboard would pay that again. An
 * entry holds the first SEARCH_CACHE_DEPTH matches in order (ids and ranks), the total and the list items of the
 * pages read so far, labelled with the organization's documents version V: the highest change number of its
 * documents in sync_changes, which every insert, update, re-index and delete of a document raises (so V also
 * covers every column of the list items).
 *
 * Why it is never stale (docs/documents.md, "Search cache"):
 * - V is read after waiting for the organization's in-flight document writes (documents.repo documentsVersion), so
 *   every change numbered up to V is committed when the entry is made, and any later change gets a higher number.
 *   Everything stored in the entry is read after that: it holds every change up to V, and possibly later ones.
 * - A hit reads the highest number its own snapshot sees (documents.repo versionAndRows, no wait) and uses the entry
 *   only if that is V. That snapshot is taken after the entry was filled, so it sees every change up to V, and, since
 *   it sees no number above V, no later change (a document's row in sync_changes carries the number of its latest
 *   change: two changes of one document are ordered by its row lock, taken before the trigger draws the number): the
 *   documents it sees are exactly those of version V. A later change
 *   stored in the entry would be committed before this snapshot, so the snapshot would see its number: the entry
 *   holds exactly version V too, the state the database answers from at that moment. A write in flight is not in
 *   that snapshot, and not in the answer, as for any read. So a hit needs no lock.
 * - So a hit uses only what its entry held when its statement was sent, plus the rows read in its own snapshot: not
 *   a newer entry that replaced it meanwhile, nor items another request stored in it meanwhile (those may be newer
 *   than the hit's snapshot).
 *
 * Per node; another node keeps its own. At most MAX_ENTRIES entries and MAX_ITEMS list items (least recently used
 * out), an item weighing one more for every ITEM_BYTES of its content: list items carry the content (spec 2.4), and
 * a few large documents must not hold the memory of thousands of small ones. An item heavier than MAX_ITEMS /
 * SEARCH_CACHE_DEPTH (~110 KB of content) is not kept at all (its page reads it again), so even one entry, which
 * eviction never drops while it is the only one, stays within MAX_ITEMS.
 */
export const SEARCH_CACHE_DEPTH = 200;
const MAX_ENTRIES = 1_000;
/** ~1.1 KB each without content (measured on the bench's documents): 20,000 items, 400 first pages of 50, take ~22 MB. */
const MAX_ITEMS = 20_000;
const ITEM_BYTES = 1_100;
/** What an item counts for against MAX_ITEMS: one, and one more per ITEM_BYTES characters of content. */
export const itemWeight = (item: DocumentListItemT) => 1 + Math.floor(item.content.length / ITEM_BYTES);

export interface SearchCacheEntry {
  version: number; total: number; ids: string[]; ranks: number[];
  /** List items by position (as ids), filled as pages are read; undefined where not read yet. */
  items: Array<DocumentListItemT | undefined>;
}

export class SearchCache {
  private entries = new Map<string, SearchCacheEntry>();
  private itemCount = 0;

  private readonly maxItemWeight: number;

  constructor(private readonly limits = { maxEntries: MAX_ENTRIES, maxItems: MAX_ITEMS }) {
    this.maxItemWeight = Math.max(1, Math.floor(limits.maxItems / SEARCH_CACHE_DEPTH));
  }

  /** The entry of a key whatever its version (to check its version and read its missing items in one statement). */
  peek(key: string): SearchCacheEntry | undefined { return this.entries.get(key); }

  /**
   * Whether `entry` (as peeked) may answer, given the version the hit's statement saw. A stale entry is dropped; a
   * valid one becomes the most recently used if it is still the key's entry.
   */
  check(key: string, entry: SearchCacheEntry, version: number): boolean {
    const current = this.entries.get(key) === entry;
    if (entry.version !== version) {
      if (current) this.drop(key, entry);
      return false;
    }
    if (current) { this.entries.delete(key); this.entries.set(key, entry); } // Map order: first key = least recently used
    return true;
  }

  set(key: string, entry: SearchCacheEntry): void {
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    this.entries.set(key, entry);
    this.itemCount += countItems(entry);
    this.evict();
  }

  /** Stores list items read for `entry` (item i at position from + i); counted only while it is the key's entry. */
  fill(key: string, entry: SearchCacheEntry, from: number, items: Array<DocumentListItemT | undefined>): void {
    const current = this.entries.get(key) === entry;
    items.forEach((item, i) => {
      if (!item || entry.items[from + i] || itemWeight(item) > this.maxItemWeight) return;
      entry.items[from + i] = Object.freeze(item); // shared by every response the entry answers
      if (current) this.itemCount += itemWeight(item);
    });
    if (current) this.evict();
  }

  get size(): number { return this.entries.size; }
  get items(): number { return this.itemCount; }

  private drop(key: string, entry: SearchCacheEntry): void {
    this.entries.delete(key);
    this.itemCount -= countItems(entry);
  }

  private evict(): void {
    while (this.entries.size > this.limits.maxEntries || (this.itemCount > this.limits.maxItems && this.entries.size > 1)) {
      const [key, entry] = this.entries.entries().next().value!;
      this.drop(key, entry);
    }
  }
}

function countItems(entry: SearchCacheEntry): number {
  let n = 0;
  for (const item of entry.items) if (item) n += itemWeight(item);
  return n;
}

/** This node's search cache of a platform. */
export const searchCache = perPlatform(() => new SearchCache());
