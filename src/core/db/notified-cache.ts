import type { Database } from './database.js';

/**
 * An in-process cache of per-organization database state that a trigger announces changes of over LISTEN/NOTIFY
 * (payload: the organization id, or `*` for all), so repeated reads of rarely changing state cost no round trip.
 * Values are kept per organization and key; an announcement drops the organization's entries, whichever process
 * committed the change. Entries are used and stored only while the listener is live on the channel (a change
 * could otherwise go unnoticed), and a load that raced with an announcement for its organization answers its
 * caller but is not kept. At most `maxOrgs` organizations are kept, least recently used dropped first, and at most
 * `maxKeysPerOrg` keys of one organization, the first kept dropped first.
 */
export class NotifiedOrgCache<V> {
  private readonly byOrg = new Map<string, Map<string, V>>();
  /** Loads in flight per organization; an announcement marks them stale so their answer is not kept. */
  private readonly loading = new Map<string, Set<{ stale: boolean }>>();

  constructor(private readonly db: Database, private readonly channel: string, private readonly maxOrgs = 10_000,
    private readonly maxKeysPerOrg = 1_000) {
    db.listener.subscribe(channel, { notify: (org) => this.forget(org), reset: () => this.forget('*') });
  }

  /**
   * The organization's value for `key`, from memory when known, else from `load` (kept when safe). A load may answer
   * undefined for "could not tell": that is returned and not kept.
   */
  async get(orgId: string, key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const live = this.db.listener.isLive(this.channel);
    const entries = live ? this.byOrg.get(orgId) : undefined;
    if (entries?.has(key)) {
      this.byOrg.delete(orgId); // most recently used last, for the size bound
      this.byOrg.set(orgId, entries);
      return entries.get(key)!;
    }
    const flight = { stale: false };
    let inFlight = this.loading.get(orgId);
    if (!inFlight) this.loading.set(orgId, inFlight = new Set());
    inFlight.add(flight);
    let value: V | undefined;
    try {
      value = await load();
    } finally {
      inFlight.delete(flight);
      if (!inFlight.size && this.loading.get(orgId) === inFlight) this.loading.delete(orgId);
    }
    if (value !== undefined && live && !flight.stale && this.db.listener.isLive(this.channel)) {
      let kept = this.byOrg.get(orgId);
      if (!kept) {
        if (this.byOrg.size >= this.maxOrgs) this.byOrg.delete(this.byOrg.keys().next().value!);
        this.byOrg.set(orgId, kept = new Map());
      }
      // Keys of one organization are bounded too (e.g. one per project ever used, deleted ones included): the oldest kept goes.
      if (!kept.has(key) && kept.size >= this.maxKeysPerOrg) kept.delete(kept.keys().next().value!);
      kept.set(key, value);
    }
    return value;
  }

  /** The organization's value for `key` when it is in memory (and safe to use), without loading it. */
  peek(orgId: string, key: string): V | undefined {
    const entries = this.db.listener.isLive(this.channel) ? this.byOrg.get(orgId) : undefined;
    if (!entries?.has(key)) return undefined;
    this.byOrg.delete(orgId); // most recently used last, for the size bound
    this.byOrg.set(orgId, entries);
    return entries.get(key);
  }

  /** Drops an organization's entries (`*`: all). Called on every announcement, and by a process right after it commits a change. */
  forget(orgId: string): void {
    for (const [org, loads] of this.loading) if (orgId === '*' || org === orgId) for (const l of loads) l.stale = true;
    if (orgId === '*') this.byOrg.clear();
    else this.byOrg.delete(orgId);
  }
}
