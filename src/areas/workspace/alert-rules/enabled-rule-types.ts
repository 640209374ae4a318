import type { Database } from '../../../core/db/database.js';
import { alertRulesRepo } from './alert-rules.repo.js';

/** Announced by migration 0050's trigger on every change to alert_rules: the organization id, or `*`. */
export const ALERT_RULES_CHANNEL = 'alert_rules_changed';
const MAX_ORGS = 10_000;

/**
 * Which event types each organization has enabled alert rules for, so that an event no rule wants (almost all of
 * them) costs no database read. An organization's entry is read once, then kept until a change to its rules is
 * announced (by this process or any other, over LISTEN/NOTIFY). Entries are used and stored only while the listener
 * is live; a read that raced with an announcement for its organization answers its caller but is not kept.
 */
export class EnabledRuleTypes {
  private readonly byOrg = new Map<string, ReadonlySet<string>>();
  /** Reads in flight per organization; an announcement marks them stale so their answer is not kept. */
  private readonly reading = new Map<string, Set<{ stale: boolean }>>();

  constructor(private readonly db: Database) {
    db.listener.subscribe(ALERT_RULES_CHANNEL, { notify: (org) => this.forget(org), reset: () => this.forget('*') });
  }

  async has(orgId: string, eventType: string): Promise<boolean> {
    const live = this.db.listener.isLive(ALERT_RULES_CHANNEL);
    const known = live ? this.byOrg.get(orgId) : undefined;
    if (known) {
      this.byOrg.delete(orgId); // most recently used last, for the size bound below
      this.byOrg.set(orgId, known);
      return known.has(eventType);
    }
    const read = { stale: false };
    let inFlight = this.reading.get(orgId);
    if (!inFlight) this.reading.set(orgId, inFlight = new Set());
    inFlight.add(read);
    let types: Set<string>;
    try {
      types = new Set(await this.db.tenant(orgId, (sql) => alertRulesRepo.enabledEventTypes(sql, orgId)));
    } finally {
      inFlight.delete(read);
      if (!inFlight.size && this.reading.get(orgId) === inFlight) this.reading.delete(orgId);
    }
    if (live && !read.stale && this.db.listener.isLive(ALERT_RULES_CHANNEL)) {
      if (this.byOrg.size >= MAX_ORGS) this.byOrg.delete(this.byOrg.keys().next().value!);
      this.byOrg.set(orgId, types);
    }
    return types.has(eventType);
  }

  /** Drops an organization's entry (`*`: all). Called on every announcement, and directly after this process commits a change. */
  forget(orgId: string): void {
    for (const [org, reads] of this.reading) if (orgId === '*' || org === orgId) for (const r of reads) r.stale = true;
    if (orgId === '*') this.byOrg.clear();
    else this.byOrg.delete(orgId);
  }
}

const byDb = new WeakMap<Database, EnabledRuleTypes>();

/** The platform's one instance (one LISTEN subscription per database). */
export function enabledRuleTypes(db: Database): EnabledRuleTypes {
  let c = byDb.get(db);
  if (!c) { c = new EnabledRuleTypes(db); byDb.set(db, c); }
  return c;
}
